"""tf.contrib.training.HParams: TF 1.15's hyperparameter container, written here (TensorFlow 2 has none).

Ported scripts build one from defaults, override it from a flag string (`hparams.parse("lr=0.1,layers=[2,3]")`)
or JSON, and read it as attributes. The rules are TF 1.15's: a hyperparameter's type is fixed by its first value;
a float one accepts an int but an int one rejects a float, bools come only from bools ("true"/"false"/"1"/"0"
when parsed), strings only from strings; a list stays a list; unknown names and malformed strings are ValueErrors naming the
hyperparameter.
"""
import json
import numbers
import re

_ASSIGNMENT = re.compile(r"""
    (?P<name>[a-zA-Z][\w.]*)             # the hyperparameter
    (\[\s*(?P<index>\d+)\s*\])?          # optional list index: name[2]=...
    \s*=\s*
    ((?P<value>[^,\[]*) | \[(?P<values>[^\]]*)\])
    ($|,\s*)""", re.VERBOSE)


def _parse_bool(text):
    lowered = text.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValueError(f"{text!r} is not a boolean (true, false, 1 or 0)")


def _parser(value_type):
    return _parse_bool if issubclass(value_type, bool) else value_type


def parse_values(values, type_map, ignore_unknown=False):
    """The {name: value} a string such as "a=1,b=[2,3],c[1]=x" assigns, each value parsed as type_map's type;
    an indexed assignment gives {index: value}."""
    results = {}
    position = 0
    while position < len(values):
        match = _ASSIGNMENT.match(values, position)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[position:]!r} (expected name=value, "
                             "name=[v1,v2] or name[index]=value, separated by commas)")
        position = match.end()
        name = match.group("name")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name} (in {values!r}): add it to the HParams first")
        parse = _parser(type_map[name])

        def parsed(text, name=name, parse=parse):
            try:
                return parse(text)
            except ValueError as error:
                raise ValueError(f"Could not parse hparam {name!r} of type {type_map[name].__name__!r} with value "
                                 f"{text!r} in {values!r}: {error}") from None

        if match.group("index") is not None:
            if name in results and not isinstance(results[name], dict):
                raise ValueError(f"Multiple assignments to variable {name!r} in {values!r}")
            results.setdefault(name, {})[int(match.group("index"))] = parsed(match.group("value"))
            continue
        if name in results:
            raise ValueError(f"Multiple assignments to variable {name!r} in {values!r}")
        if match.group("value") is not None:
            results[name] = parsed(match.group("value"))
        else:
            items = match.group("values")
            results[name] = [parsed(item) for item in items.split(",")] if items.strip() else []
    return results


def _cast(name, value_type, value):
    """`value` as `value_type`, when TF 1.15 allowed that conversion; else a ValueError naming the hparam."""
    failure = ValueError(f"Could not cast hparam {name!r} of type {value_type.__name__!r} from value {value!r}")
    if issubclass(value_type, type(None)):
        return value
    if issubclass(value_type, (str, bytes)) != isinstance(value, (str, bytes)):
        raise failure
    if issubclass(value_type, bool) != isinstance(value, bool):
        raise failure
    if issubclass(value_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise failure
    if issubclass(value_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise failure
    return value_type(value)


class HParams:
    """Hyperparameters as attributes: HParams(learning_rate=0.1, num_layers=[2, 3]), then hparams.learning_rate."""

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("HParams(hparam_def=...) reads an HParamDef protocol buffer, which TensorFlow 2 no "
                             "longer ships: pass the values as keyword arguments or parse_json() them")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Add hyperparameter `name`; its type is that of `value` (of its first element for a list)."""
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        """Set an existing hyperparameter, converting `value` to its type as TF 1.15 did."""
        if name not in self._hparam_types:
            raise KeyError(f"{name!r} is not a hyperparameter of this HParams (known: {sorted(self._hparam_types)})")
        value_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, value_type, item) for item in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, value_type, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Override from a string "name=value,name2=[v1,v2]"; returns self."""
        type_map = {name: value_type for name, (value_type, _) in self._hparam_types.items()}
        parsed = parse_values(values, type_map)
        for name, value in parsed.items():
            if isinstance(value, dict):     # indexed assignments into an existing list
                items = list(getattr(self, name))
                for index, item in value.items():
                    items[index] = item
                parsed[name] = items
        return self.override_from_dict(parsed)

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        """The values as JSON (callables, which JSON cannot hold, are left out)."""
        def skip_callables(value):
            return None if callable(value) else value

        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys,
                          default=skip_callables)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        """The value of `key`, or `default` when absent (a default of the wrong type is a ValueError)."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            value_type, is_list = self._hparam_types[key]
            for item in default if is_list else (default,):
                _cast(key, value_type, item)
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self})"
