"""Exporters for EvalSpec(exporters=...): after an evaluation in train_and_evaluate, write the model as a SavedModel
under model_dir/export/<name>. FinalExporter exports once, after the final evaluation; LatestExporter after every
evaluation, keeping the newest exports_to_keep."""
import os

import tensorflow.compat.v1 as tf


class Exporter:
    """What train_and_evaluate calls after each evaluation: export(estimator, export_path, checkpoint_path,
    eval_result, is_the_final_export) returns the export's path, or None when it did not export."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise ValueError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        if not callable(serving_input_receiver_fn):
            raise ValueError(f"{type(self).__name__}: serving_input_receiver_fn must be callable, got "
                             f"{serving_input_receiver_fn!r}")
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    name = property(lambda self: self._name)

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(export_path, self._serving_input_receiver_fn,
                                            assets_extra=self._assets_extra, as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports the model evaluated last, once training has ended."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        return self._export(estimator, export_path, checkpoint_path)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and deletes all but the newest `exports_to_keep` exports (None: keep all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError(f"LatestExporter: exports_to_keep must be > 0 or None, got {exports_to_keep}")
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        export_dir = self._export(estimator, export_path, checkpoint_path)
        if self._exports_to_keep is not None:
            exports = sorted(entry for entry in tf.gfile.ListDirectory(export_path) if entry.isdigit())
            for old in exports[:-self._exports_to_keep]:
                tf.gfile.DeleteRecursively(os.path.join(export_path, old))
        return export_dir
