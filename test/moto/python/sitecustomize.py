# Loaded by moto_server's Python (test/moto/moto-server.ts puts this folder on its PYTHONPATH): one change to moto,
# with the same result. moto's TransactWriteItems backs its table up before writing, once per item of the
# transaction, each a deep copy of the whole table (items, indexes, stream records); the copies are taken before any
# write, so they are the same snapshot. Here the first copy of a table is reused for the transaction's other items.
# Any other moto (an import or a name not as expected) runs unchanged.
import copy
import threading

try:
    import moto.dynamodb.models as _models
    from moto.dynamodb.models.table import Table as _Table

    _backend = _models.DynamoDBBackend
    _transact = _backend.transact_write_items
    _local = threading.local()

    class _CopyOncePerTransaction:
        """The `copy` module as moto's DynamoDB models see it: a table's deep copy taken once per transaction."""

        def __getattr__(self, name):
            return getattr(copy, name)

        @staticmethod
        def deepcopy(value, memo=None):
            taken = getattr(_local, "tables", None)
            if taken is None or not isinstance(value, _Table):
                return copy.deepcopy(value, memo)
            if id(value) not in taken:
                taken[id(value)] = copy.deepcopy(value, memo)
            return taken[id(value)]

    def _transact_write_items(self, transact_items):
        _local.tables = {}
        try:
            return _transact(self, transact_items)
        finally:
            _local.tables = None

    if getattr(_models, "copy", None) is copy:
        _models.copy = _CopyOncePerTransaction()
        _backend.transact_write_items = _transact_write_items
except Exception:  # noqa: BLE001 - a moto this does not fit runs as it is
    pass

# A sitecustomize this one shadows (the Python's own, further on the path) still runs.
try:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
    if _spec is not None and _spec.loader is not None:
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
except Exception:  # noqa: BLE001 - as without this file
    pass
