"""tf.contrib.lookup: TensorFlow's lookup tables under TF 1.15's names (tf.compat.v1.lookup keeps most)."""
from tensorflow.python.ops.lookup_ops import (  # noqa: F401
    HashTable,
    IdTableWithHashBuckets,
    KeyValueTensorInitializer,
    TextFileIdTableInitializer,
    TextFileIndex,
    TextFileInitializer,
    TextFileStringTableInitializer,
    index_table_from_file,
    index_table_from_tensor,
    index_to_string_table_from_file,
    index_to_string_table_from_tensor,
)
from tensorflow.python.ops.lookup_ops import StaticHashTableV1 as StaticHashTable  # noqa: F401
from tensorflow.python.ops.lookup_ops import (
    StaticVocabularyTableV1 as StaticVocabularyTable,  # noqa: F401
)

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
