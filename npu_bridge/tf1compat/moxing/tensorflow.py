"""`moxing.tensorflow`: ModelArts' own TensorFlow training framework, which has no local stand-in."""
raise ImportError("moxing.tensorflow is ModelArts' training framework (mox.run, builtin algorithms); npu_bridge's "
                  "local moxing stand-in provides mox.file only. Run the script's own training loop instead")
