"""Packaging for npu_bridge: the Ascend TF adapter's Python API, emulated on CPU."""
from setuptools import find_packages, setup

setup(
    name="npu_bridge",
    version="0.1.0",
    description=(
        "Run TensorFlow 1.x scripts written for Huawei Ascend NPUs (npu_bridge) unmodified on any CPU, "
        "with the NPU's mixed-precision decisions reproduced"
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.11",
    # The built-in operator library is a data folder (no __init__.py) shipped as its own package, so setuptools
    # installs its JSON files without warning that an importable folder was left out.
    packages=find_packages(include=["npu_bridge", "npu_bridge.*", "hccl", "hccl.*"]) + ["npu_bridge.core.opp"],
    # npu-run's console script starts outside the package, so its arguments are read before TensorFlow loads.
    py_modules=["npu_run"],
    package_data={"npu_bridge.core.opp": ["built-in/**/*.json"]},
    install_requires=[
        "tensorflow>=2.15",
        # tf.compat.v1.layers and rnn_cell need the Keras 2 package on TF >= 2.16 (bundled in 2.15).
        "tf_keras>=2.15",
        # tf.contrib.slim / layers / framework under npu-run: tf-slim is Google's extraction of TF 1.15's contrib
        # code (the same variable names and defaults), which npu_bridge.tf1compat.contrib re-exports.
        "tf-slim>=1.1",
        "numpy",
        "protobuf",
        "ml_dtypes",
    ],
    extras_require={
        # tensorboard: the tests read the run's event files with TensorBoard's own reader (TensorFlow >= 2.16 no
        # longer installs it).
        "test": ["pytest", "hypothesis", "tensorboard"], "bench": ["matplotlib"], "debug": ["matplotlib"],
        # TensorFlow 2.15 (the last release with tf.estimator) in one command: `pip install ".[tf215]"`. Installing
        # tensorflow-cpu first does not help: it does not provide the `tensorflow` distribution named above, so pip
        # would pull the newest TensorFlow on top of it.
        "tf215": ["tensorflow==2.15.*", "tf_keras==2.15.*"],
    },
    entry_points={
        "console_scripts": [
            "npu-run=npu_run:main",
            "npu-report=npu_bridge.report_cli:main",
            "npu-debug=npu_bridge.debug.cli:main",
        ]
    },
    classifiers=[
        "Programming Language :: Python :: 3.11",
    ],
)
