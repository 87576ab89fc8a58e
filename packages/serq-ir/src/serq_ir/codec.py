"""Reading and writing IR JSON. A fault of IR bytes is one line naming the JSON path; of a file a user gave
(:func:`load`), it is told at its line and column, the line quoted with a caret."""

from __future__ import annotations

import functools
import json
import math
import re
from typing import TYPE_CHECKING, Any

import msgspec

from .errors import IRError, at_path
from .nodes import FILE_NAME_BOUND, IR_VERSION, MAX_PATH, Program, Span

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

_encoder = msgspec.json.Encoder(order="deterministic")


class _Versioned(msgspec.Struct):
    version: Any = None


def _decoders() -> tuple[msgspec.json.Decoder, msgspec.json.Decoder]:
    """The decoders of a program and of a file's version, built with every signal that has a Python handler
    held back (``pthread_sigmask``) and delivered once they are built. Building them, msgspec hashes the
    ``typing`` unions of the IR's types, Python code called from C that clears an exception raised in it: a
    Ctrl-C (the KeyboardInterrupt of Python's handler, or an alarm's handler's) that landed there, on the first
    ``serq_sim.run`` or ``load`` of a process, was dropped without a trace and the run went on as if
    uninterrupted. Held back, it is raised here, after the build, and goes where the caller's code sends it.
    (The ``serq`` command's own handlers deliver a dropped signal again anyway: serq.signals.)"""
    import signal

    mask = getattr(signal, "pthread_sigmask", None)  # (not on Windows: built as before)
    held = set()
    if mask is not None:
        for sig in signal.valid_signals():
            try:
                if callable(signal.getsignal(sig)):
                    held.add(sig)
            except (ValueError, OSError):  # pragma: no cover - a number the platform lists but will not take
                continue
    before = mask(signal.SIG_BLOCK, held) if held else None
    try:
        return msgspec.json.Decoder(Program), msgspec.json.Decoder(_Versioned)
    finally:
        if before is not None:
            mask(signal.SIG_SETMASK, before)  # (a signal held back is delivered now; its handler runs next)


_decoder, _version_decoder = _decoders()


#: the keys every report of ``serq run --json`` has at its top (serq_report.json), and an IR has none of
REPORT_KEYS = frozenset({"horizon", "end", "warmup", "seed", "events", "arrivals", "stages", "pools"})


def _other_json(data: bytes) -> str | None:
    """What the JSON ``data`` of no IR version is when it is another of serQ's outputs, said instead of
    ``IR version null is not supported`` (a report of ``serq run --json`` saved under a name ``.ir.json``, or
    given to ``serq compare``): ``a report of serq run --json``; None for any other JSON."""
    try:
        top = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError, ValueError):
        return None
    if isinstance(top, dict) and REPORT_KEYS <= top.keys():
        return "a report of serq run --json"
    return None


def _quote(msg: str) -> str:
    return msg.replace("`", "'")


def _located(data: bytes, name: str, off: int, message: str) -> str:
    """``message`` at byte ``off`` of the JSON text ``data``: ``name:line:col`` (the column counts
    characters), the line quoted as every input's is (:func:`serq.jsonin.at_byte`: bytes that are not UTF-8
    and characters that do not print as escapes, only the bytes near the fault decoded) and a caret."""
    from serq.jsonin import at_byte

    return at_byte(data, name, max(0, min(off, len(data))), message)


#: the words an item of a serQ program begins with (the grammar's and its sugar's), by which an IR file's text
#: that is a program's source is told (:func:`_source_note`)
_SOURCE_WORDS = frozenset({"def", "gauge", "let", "mark", "pool", "pull", "queue", "request", "run", "server",
                           "session", "share", "stage", "use", "workload"})


def _source_note(data: bytes, off: int) -> str:
    """What a malformed-JSON error at byte ``off`` adds when the text is a serQ program's (its first word,
    after blank lines and ``//`` comments, begins an item, and the JSON fails there or before): that it is
    source, read by the frontend (``serq_ir.load("p.sq")``, an IR path holding a program, said only "JSON is
    malformed"); ``""`` otherwise."""
    text = data[:4096].decode("utf-8", "replace")
    pos = 0
    while True:
        rest = text[pos:]
        stripped = rest.lstrip()
        pos += len(rest) - len(stripped)
        if not stripped.startswith("//"):
            break
        nl = stripped.find("\n")
        if nl < 0:
            return ""
        pos += nl + 1
    word = re.match(r"[a-z]+", text[pos:])
    if word is None or word.group() not in _SOURCE_WORDS or len(text[:pos].encode()) < off:
        return ""
    return ("; the text looks like serQ source, not IR: a source program is read by a name ending in `.sq` "
            "(serq_frontend.compile in Python)")


def _nonfinite_note(data: bytes, off: int) -> str:
    """What a malformed-JSON error at byte ``off`` adds when the text there is ``NaN``, ``Infinity`` or
    ``-Infinity``, which Python's json.dump writes for such a float (an IR edited in Python, saved with
    json's defaults) and no JSON reader takes: how the IR writes an infinite value; ``""`` otherwise."""
    start = off - 1 if off and data[off - 1:off] == b"-" else off  # (the reader stops after a minus sign)
    word = re.match(rb"-?(NaN|Infinity)\b", data[start:start + 10])
    if word is None:
        return ""
    return (f"; `{word.group().decode()}` is no JSON number (Python's json.dump writes it for such a float): a "
            "number of the IR is finite, and an infinite value is written \"inf\" or \"-inf\", where the IR "
            "allows one")


def _decode_error(data: bytes, name: str, e: msgspec.DecodeError, raw: Any = None) -> IRError:
    """A :class:`msgspec.DecodeError` as one message: where the text names a byte (malformed JSON) or is
    not UTF-8, at its line and column; a schema fault as msgspec words it, with its JSON path, but for a value
    of the wrong type where a number or a name of the IR's goes (:func:`_typed_detail`). ``raw``: the program
    as builtins, when it is no JSON text (:func:`conform`'s)."""
    msg = _quote(str(e))
    m = re.search(r" \(byte (\d+)\)$", msg)
    if msg.startswith("Invalid UTF-8") or m:  # (malformed JSON at a byte that is not UTF-8: a file of UTF-16,
        # whose error was "JSON is malformed: invalid character" at its first byte)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as u:
            if m is None or u.start <= int(m.group(1)):  # (one after the break: the JSON's fault first)
                from serq.files import not_utf8

                return IRError(_located(data, name, u.start, not_utf8(data[u.start], data[:4],
                                                                      at=f" at offset {u.start}")))
    if msg == "Input data was truncated":  # the text ends inside a value: at its end (the last non-blank)
        end = len(data.rstrip())
        if not end:
            return IRError(_located(data, name, 0, "the file is empty (an IR file is a JSON object)"))
        lone = _lone_surrogate(data)
        if lone is not None:
            return IRError(_located(data, name, lone, _LONE_SURROGATE))
        return IRError(_located(data, name, end, "JSON is malformed: the text ends before the value does "
                                                 "(a bracket, a brace or a quote is missing)"))
    if m:  # (a compressed file's first bytes are malformed JSON before they are not UTF-8: said as what it is)
        from serq.files import packed_note, utf16_note

        note = (packed_note(data[:4]) or utf16_note(data[:4]) or _source_note(data, int(m.group(1)))
                or _nonfinite_note(data, int(m.group(1))))
        return IRError(_located(data, name, int(m.group(1)), f"{msg[: m.start()]} (at offset {m.group(1)}){note}"))
    # a schema fault: msgspec's words, with the JSON path it names (none at the top: "$"); an unknown field
    # is the key itself
    at = re.search(r" - at '(\$[^']*)'$", msg)
    detail, path = (msg[: at.start()], at.group(1)) if at else (msg, "$")
    if detail == "Number out of range":  # (1e309, -1e309, an integer of 400 digits: no double holds it)
        detail = _BEYOND_DOUBLES
    elif detail == "Integer value out of range":  # (an index or the version of more than 4300 digits)
        from serq.numbers import digits_reason

        detail = f"the whole number has {digits_reason()}"
    if detail == f"Expected 'str' of length <= {MAX_PATH}":  # (a span's file, the trace's, the source)
        detail = f"{FILE_NAME_BOUND}, and this one is longer"
    detail = _schema_words(_typed_detail(detail, raw, data, path))
    unknown = re.fullmatch(r"Object contains unknown field '([^']*)'", detail)
    # the key or value msgspec quotes is the file's text, of any length: quoted as every message quotes a name
    # (serq.errors.clipped; a key of 5 000 characters was quoted whole, and again in the path)
    from serq.errors import clipped

    detail = re.sub(r"'([^'\n]*)'", lambda q: f"'{clipped(q.group(1))}'", detail)
    if unknown:  # (a misspelt key, or one with a look-alike letter, `horizоn`: the field it may be)
        from serq.errors import did_you_mean

        detail += did_you_mean(unknown.group(1), _field_names(raw, data, path))
    shown = f"error: {name}: {detail} - at '{clipped(path)}'" if at else f"error: {name}: {detail}"
    if unknown:
        return IRError(shown, json_path=_child(path, unknown.group(1)), detail=detail, json_key=True)
    return IRError(shown, json_path=path, detail=detail)


def _field_type(raw: Any, steps: tuple) -> Any:
    """The schema's type (:mod:`msgspec.inspect`) of the value at ``steps`` of ``raw`` (the program as
    builtins), a union of nodes resolved by the tag the value carries; None where the path or a tag does not
    lead to one field."""
    import msgspec.inspect as mi

    t: Any = mi.type_info(Program)
    node = raw
    for step in steps:
        while isinstance(t, mi.UnionType):  # (a node by its tag; an optional value by what is not None)
            kinds = [u for u in t.types if not isinstance(u, mi.NoneType)]
            structs = [u for u in kinds if isinstance(u, mi.StructType)]
            if len(kinds) == 1:
                t = kinds[0]
            elif isinstance(node, dict) and structs and all(u.tag_field for u in structs):
                tag = node.get(structs[0].tag_field)
                t = next((u for u in structs if u.tag == tag), None)
            elif isinstance(node, dict) and len(structs) == 1:
                t = structs[0]
            else:
                return None
        if isinstance(step, int):
            if not (isinstance(node, list) and 0 <= step < len(node)):
                return None
            if isinstance(t, mi.TupleType):
                t = t.item_types[step] if step < len(t.item_types) else None
            elif isinstance(t, mi.StructType) and t.array_like:  # (a constant, ["lambda", 0.8])
                t = t.fields[step].type if step < len(t.fields) else None
            elif isinstance(t, (mi.ListType, mi.VarTupleType)):
                t = t.item_type
            else:
                return None
        elif isinstance(t, mi.StructType) and isinstance(node, dict):
            t = next((f.type for f in t.fields if f.encode_name == step), None)
        else:
            return None
        if t is None:
            return None
        node = node[step]
    return t


def _field_names(raw: Any, data: bytes, path: str) -> list[str]:
    """The keys the object at ``path`` of ``raw`` (the program as builtins; None: ``data`` decoded) may have
    (its node's fields, the node told by its tag), or none where the path leads to no one node: what an
    unknown key's did-you-mean offers."""
    import msgspec.inspect as mi

    if raw is None:
        try:
            raw = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return []
    steps = _path_steps(path)
    t = _field_type(raw, steps) if steps is not None else None
    node = raw
    for step in steps or ():
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return []
    while isinstance(t, mi.UnionType):  # (a node by its tag, as _field_type tells one)
        structs = [u for u in t.types if isinstance(u, mi.StructType)]
        if len(structs) == 1:
            t = structs[0]
        elif isinstance(node, dict) and structs and all(u.tag_field for u in structs):
            t = next((u for u in structs if u.tag == node.get(structs[0].tag_field)), None)
        else:
            return []
    if not isinstance(t, mi.StructType) or t.array_like:
        return []
    return [f.encode_name for f in t.fields]


def _json_kind(v: Any) -> str:
    """What a JSON value is, in the words of a message: ``the text "x"``, ``true``, ``null``, an object."""
    if isinstance(v, str):
        from serq.errors import clipped

        return f"the text {json.dumps(clipped(v))}"
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    return "an object" if isinstance(v, dict) else "a list" if isinstance(v, list) else repr(v)


#: a JSON type as msgspec names it -> as a message says it
_JSON_TYPES = {"str": "a string", "int": "a whole number", "float": "a number", "bool": "true or false",
               "object": "an object", "array": "a list", "null": "null"}
_BOUNDS = {">=": "at least", "<=": "at most", ">": "above", "<": "below"}


def _typed(t: str) -> str:
    """msgspec's type (``int | null``) in a message's words (``a whole number or null``)."""
    return " or ".join(_JSON_TYPES.get(u.strip(), u.strip()) for u in t.split("|"))


def _schema_words(detail: str) -> str:
    """msgspec's words of a value of the wrong type or shape in a message's, the JSON's terms: ``Expected 'str',
    got 'int'`` is ``a string is wanted, not a whole number``, ``Expected 'int' >= 1`` ``a whole number at
    least 1 is wanted``, ``Expected 'array' of length 4`` ``a list of 4 items is wanted``, ``Object missing
    required field 'via'`` ``the field 'via' is missing`` (msgspec's type names, `str`, `array`, are
    Python's, not the file's). ``detail`` itself otherwise."""
    m = re.fullmatch(r"Expected '([^']+)', got '([^']+)'", detail)
    if m:
        got = "a boolean" if m.group(2) == "bool" else _typed(m.group(2))
        return f"{_typed(m.group(1))} is wanted, not {got}"
    m = re.fullmatch(r"Expected 'array' of (?:length (>=|<=)? ?(\d+)|(at least|at most) length (\d+))(?:, got (\d+))?",
                     detail)
    if m:
        bound, n, most, k, got = m.groups()
        count = f"{most} {k}" if most else f"{_BOUNDS[bound]} {n}" if bound else n
        return (f"a list of {count} item{'' if count.endswith(' 1') or count == '1' else 's'} is wanted"
                + (f", not {got}" if got is not None else ""))
    m = re.fullmatch(r"Expected 'str' of length (>=|<=) (\d+)", detail)
    if m:
        return f"a string of {_BOUNDS[m.group(1)]} {m.group(2)} characters is wanted"
    m = re.fullmatch(r"Expected '([^']+)' (>=|<=|>|<) (\S+)", detail)
    if m:
        return f"{_typed(m.group(1))} {_BOUNDS[m.group(2)]} {m.group(3)} is wanted"
    m = re.fullmatch(r"Expected '([^']+)'", detail)
    if m:
        return f"{_typed(m.group(1))} is wanted"
    m = re.fullmatch(r"Object missing required field '([^']*)'", detail)
    if m:
        return f"the field '{m.group(1)}' is missing"
    return detail


#: the start of the words of a value of the wrong type where a number goes (:func:`_typed_detail`)
_NUMBER_WANTED = "a number is wanted"


def _decoded_at(raw: Any, data: bytes, path: str) -> tuple[Any, tuple] | None:
    """The IR file's JSON (``raw``, else ``data`` decoded) and the steps of ``path`` in it, or ``None`` where the
    path or the JSON cannot be read (a message's detail then stays msgspec's)."""
    steps = _path_steps(path)
    if steps is None:
        return None
    if raw is None:
        try:
            raw = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return None
    return raw, steps


def _typed_detail(detail: str, raw: Any, data: bytes, path: str) -> str:
    """msgspec's words of a value of the wrong type where a number of the IR goes (a float, or "inf"/"-inf"
    where the IR allows an infinite one: ``Number``) or one of its names (an operator, a distribution, ...),
    said as the IR has it: ``a number is wanted (or "inf", "-inf"), not the text "1e3"``, ``'zzz' is not
    one of exp, det, …``. msgspec said ``Invalid enum value '1e3'`` of a number written as a string, and
    ``Expected 'float | str'`` of a bool, as if any text would do. ``detail`` itself otherwise."""
    enum = re.fullmatch(r"Invalid enum value '(.*)'", detail, re.S)
    tag = re.fullmatch(r"Invalid value '(.*)'", detail, re.S) if enum is None else None
    if tag is not None:
        return _tag_detail(detail, raw, data, path, tag.group(1))
    if enum is None and not detail.startswith("Expected 'float | str', got "):
        return detail
    import msgspec.inspect as mi

    found = _decoded_at(raw, data, path)
    if found is None:
        return detail
    raw, steps = found
    try:
        t = _field_type(raw, steps)
        value: Any = raw
        for step in steps:
            value = value[step]
    except (LookupError, TypeError, RecursionError):
        return detail
    if isinstance(t, mi.UnionType):
        kinds = [u for u in t.types if not isinstance(u, mi.NoneType)]
        literal = [u for u in kinds if isinstance(u, mi.LiteralType)]
        if any(isinstance(u, mi.FloatType) for u in kinds) and len(literal) == len(kinds) - 1:
            words = ", ".join(f'"{w}"' for u in literal for w in u.values)
            return f"{_NUMBER_WANTED}{f' (or {words})' if words else ''}, not {_json_kind(value)}"
    if isinstance(t, mi.LiteralType) and enum is not None and isinstance(value, str):
        from serq.errors import clipped, did_you_mean

        return (f"'{clipped(value)}' is not one of {', '.join(map(str, t.values))}"
                f"{did_you_mean(value, [str(v) for v in t.values])}")
    return detail


def _tag_detail(detail: str, raw: Any, data: bytes, path: str, value: str) -> str:
    """msgspec's ``Invalid value 'fifo'`` of a node's tag (its ``kind``) that names no node of the union at that
    place, said with the kinds it may be and the one it may have meant: ``'fifo' is not a kind of node here
    (one of Fifo, Ps, Delay, Step, Extension) (did you mean `Fifo`?)``, where the kinds went unsaid (and a
    look-alike letter, ``Fifо``, unseen). ``detail`` itself where the place is not a tag of such a union."""
    import msgspec.inspect as mi

    found = _decoded_at(raw, data, path)
    if found is None or not found[1] or not isinstance(found[1][-1], str):
        return detail
    raw, steps = found
    try:
        t = _field_type(raw, steps[:-1])
    except (LookupError, TypeError, RecursionError):
        return detail
    if not isinstance(t, mi.UnionType):
        return detail
    structs = [u for u in t.types if isinstance(u, mi.StructType)]
    tags = [str(u.tag) for u in structs if u.tag_field == steps[-1] and u.tag is not None]
    if not tags or len(tags) != len(structs):
        return detail
    from serq.errors import clipped, did_you_mean

    return f"'{clipped(value)}' is not a kind of node here (one of {', '.join(tags)}){did_you_mean(value, tags)}"


#: a string's escape of a UTF-16 high surrogate that no low one follows, near the end of the text, which msgspec
#: takes for a text cut short ("Input data was truncated"; further from the end it says "unexpected end of
#: escaped utf-16 surrogate pair" at the byte)
_LONE_SURROGATE = ("JSON is malformed: a string's escape \\uD800-\\uDBFF is the first half of a UTF-16 surrogate "
                   "pair, and no second half (\\uDC00-\\uDFFF) follows it")


def _lone_surrogate(data: bytes) -> int | None:
    """The offset of an escape of a high surrogate (``\\ud800``) among the last bytes of ``data`` (msgspec says
    "truncated" when the six bytes after it, where the low one's escape would be, run past the end) that no
    escape of a low one follows, its backslash an escape's (not the second of an escaped ``\\\\``); None when
    none is."""
    found = None
    pattern = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})")
    for m in pattern.finditer(data, max(0, len(data) - 12)):
        i = j = m.start()
        while j > 0 and data[j - 1] == 0x5C:  # (the backslashes just before this one)
            j -= 1
        if (i - j) % 2 == 0 and data[m.end():].strip():  # (nothing after it: the text is cut short there)
            found = i
    return found


#: a number of the file beyond a double's range, as msgspec refuses it ("Number out of range")
_BEYOND_DOUBLES = ("the number is beyond the range of a double (at most about 1.8e308 in size); an infinite value "
                   "is written \"inf\" or \"-inf\", where the IR allows one")


def _child(path: str, key: str) -> str:
    """The JSON path of member ``key`` of the object at ``path`` (bracketed when not a plain name)."""
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"{path}[{json.dumps(key)}]"


@functools.cache
def _step() -> re.Pattern[str]:
    """A step of a JSON path as the IR's errors write one: ``.name``, ``[3]`` or ``["a key"]`` (compiled on
    first use: only an error is located by its path)."""
    return re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _path_steps(path: str) -> tuple | None:
    """``"$.stages[0].kind"`` as ``("stages", 0, "kind")`` (the leading ``$`` may be left out), or None
    when ``path`` is not a JSON path of that form."""
    pos = 1 if path.startswith("$") else 0
    steps: list = []
    if pos == 0 and path and path[0] not in ".[":
        path = "." + path
    step = _step().match
    while pos < len(path):
        m = step(path, pos)
        if m is None:
            return None
        name, index, quoted = m.groups()
        steps.append(name if name is not None else int(index) if index is not None else json.loads(quoted))
        pos = m.end()
    return tuple(steps)


#: the fields of the IR's structs written as arrays (``array_like``), in their order: a path that names one
#: (the validator's ``…attrs[0].slot``) is at that index of the array (``…attrs[0][0]``)
_ARRAY_FIELDS = {"SlotValue": ("slot", "value"), "Constant": ("name", "value")}


def _as_written(steps: tuple) -> tuple:
    """``steps`` with a field of a struct written as an array (a preset's ``[slot, value]``, a constant's
    ``[name, value]``) as its index there: a preset's built-in slot (``$.workload.presets[0].attrs[0].slot``)
    was told without its line and column, the file having no key ``slot`` to find."""
    out = list(steps)
    for k, step in enumerate(out):
        if not isinstance(step, str) or k == 0 or not isinstance(out[k - 1], int):
            continue
        before = out[:k]
        if before[:2] == ["workload", "presets"] and (
                (len(before) == 5 and before[3] == "attrs") or (len(before) == 6 and before[3] == "turns")):
            fields = _ARRAY_FIELDS["SlotValue"]
        elif len(before) == 2 and before[0] == "constants":
            fields = _ARRAY_FIELDS["Constant"]
        else:
            continue
        if step in fields:
            out[k] = fields.index(step)
    return tuple(out)


def locate(data: bytes, e: IRError, name: str) -> IRError:
    """``e``, an error about the value at a JSON path of the IR text ``data`` (its ``json_path``), told at
    that value's line and column in ``name``, the line quoted with a caret (``NAME:LINE:COL: error: DETAIL -
    at 'PATH'``): how :func:`load` tells a fault of an IR file, as a source's are told. ``e`` itself when
    it names no path or the text has no value there."""
    path = e.json_path
    steps = _path_steps(path) if path is not None else None
    if steps is None:
        return e
    steps = _as_written(steps)
    from serq.jsonin import located_at, value_at

    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        at = value_at(text, steps, key=e.json_key)
    except RecursionError:  # pragma: no cover - value_at does not recurse; its skips are json's
        at = None
    if at is None:
        return e
    from serq.errors import clipped

    return IRError(located_at(text, name, at, f"{e.detail} - at '{clipped(path)}'"), json_path=path,
                   detail=e.detail, json_key=e.json_key)


def _switch(name: str, v: Any) -> None:
    """Refuse (a TypeError naming it) a switch that is no bool (serq.numbers.switch): ``check="no"`` checked,
    ``spans=None`` left the spans out, each taken by its truth."""
    from serq.numbers import switch

    if not switch(v):
        raise TypeError(f"{name} must be True or False, not {v!r:.60}")


def conform(program: Program, *, name: str = "<program>") -> Program:
    """``program`` as the IR's schema types it, or :class:`IRError` at the first field that is not so
    typed (``- at '$.session[0].work.value'``) or a version this serq-ir does not read: the checks
    :func:`decode` makes of IR JSON, for a Program built in Python. msgspec does not check a Struct's fields
    when it is made, so ``Num(value="1")``, ``session=None``, a statement that is an int or ``version=999``
    reached the simulator as a ValueError of float() or a TypeError deep in its set-up, or ran (version
    999), and :func:`encode` wrote JSON that :func:`decode` refuses. ``serq_sim.run`` and :func:`encode`
    call this; what it returns is a copy of equal value (a whole number in a number's field a float)."""
    if not isinstance(program, Program):
        raise TypeError(f"a serq_ir.Program is wanted, not {type(program).__name__}")
    version = program.version
    if type(version).__module__ == "numpy":
        try:
            version = _numpy_number(version)
        except TypeError:
            pass
    if type(version) is not int or version != IR_VERSION:
        shown = repr(version)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}… ({len(shown)} characters)"
        raise at_path(name, f"IR version {shown} is not supported (this serq-ir reads version {IR_VERSION})",
                      "$.version")
    from .rules import shared_problem

    shared = shared_problem(program)  # (to_builtins writes a node out at each place it stands)
    if shared is not None:
        raise at_path(name, shared[1], shared[0])
    try:
        raw = msgspec.to_builtins(program, enc_hook=_numpy_number)
    except (TypeError, ValueError) as e:  # an object msgspec cannot represent (a set, a function, …)
        raise IRError(f"error: {name}: a value the IR cannot hold: {_quote(str(e))}") from None
    except RecursionError:
        raise IRError(f"error: {name}: the program nests too deeply to be the IR's") from None
    try:
        return msgspec.convert(raw, Program)
    except msgspec.ValidationError as e:
        raise _decode_error(b"", name, e, raw) from None
    except RecursionError:
        raise IRError(f"error: {name}: the program nests too deeply to be the IR's") from None


def _numpy_number(obj: Any) -> Any:
    """A numpy scalar (``numpy.float64(0.5)``, ``numpy.int64(3)``) as the Python number it holds: a program
    built in Python from numpy's arithmetic is the program of those numbers (msgspec encodes no numpy type,
    not even float64, a float's subclass). Anything else is msgspec's TypeError, as it would be."""
    if type(obj).__module__ == "numpy" and getattr(obj, "ndim", None) == 0 and hasattr(obj, "item"):
        value = obj.item()
        if isinstance(value, int | float):
            return value
    raise TypeError(f"Encoding objects of type {type(obj).__module__}.{type(obj).__qualname__} is unsupported")


def checked(program: Program, *, name: str = "<program>") -> Program:
    """``program``, a Program built in Python, held to everything :func:`decode` holds IR JSON to: its
    schema (:func:`conform`) and its references and rules (:func:`serq_ir.validate.validate`), or
    :class:`IRError` at the first fault. A fault both see (an operator or a context name that is not the
    IR's) is told in the words of the validation, which name the node. Returns the program as the schema
    types it (:func:`conform`: a numpy number as the Python number it holds), equal to ``program``."""
    from .validate import validate

    try:
        typed = conform(program, name=name)
    except IRError as e:
        if (e.detail or "").startswith(_NUMBER_WANTED):  # (validation words a str "0.5" as the number 0.5)
            raise
        try:
            validate(program, name=name)
        except IRError as named:
            raise named from None
        except Exception:  # noqa: BLE001, S110 - a field of the wrong type: the schema's words say it
            pass
        raise
    return validate(typed, name=name)


def _json_numbers(obj: Any, path: str, name: str, infinite: list[str]) -> Any:
    """``obj`` (a program as :func:`msgspec.to_builtins` gives it) with each infinite float written as the
    IR writes infinity, ``"inf"`` or ``"-inf"`` (its path noted in ``infinite``); a NaN is refused, as JSON
    has no number for it (msgspec writes both as ``null``, which reads back as no value or not at all)."""
    if isinstance(obj, float):
        if obj != obj:
            raise at_path(name, "the number is NaN, which IR JSON cannot hold", path)
        if obj in (math.inf, -math.inf):
            infinite.append(path)
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict):
        return {k: _json_numbers(v, _child(path, k), name, infinite) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_numbers(v, f"{path}[{i}]", name, infinite) for i, v in enumerate(obj)]
    return obj


def encode(program: Program, *, spans: bool = True) -> bytes:
    """The program as compact, deterministic JSON, which :func:`decode` reads back as the same program.
    ``spans=False`` leaves out the source spans.

    A Program built in Python is held to the schema first (:func:`conform`); an infinite float is written
    ``"inf"`` (``"-inf"``), as the IR writes infinity, where a number may be infinite and refused
    elsewhere, and a NaN is refused: msgspec wrote them as ``null``, so an ``inf`` horizon read back as no
    horizon and an ``inf`` cap as a file that does not load."""
    if not isinstance(program, Program):  # (a str or a dict was encoded as JSON of its own, silently)
        raise TypeError(f"encode() takes a serq_ir.Program, not {type(program).__name__}")
    _switch("spans", spans)
    from serq.shared import collector_raised

    with collector_raised():  # (a copy of the program as builtins and back: serq.shared.WORK_GC_THRESHOLD)
        return _encode(program, spans)


def _encode(program: Program, spans: bool) -> bytes:
    program = conform(program)
    if not spans:
        program = _without_spans(program)
    return _typed_json(program)


def _typed_json(program: Program) -> bytes:
    """The JSON of ``program`` as :func:`conform` typed it, an infinite float written as the IR writes it."""
    data = _encoder.encode(program)
    if b"null" not in data:  # (no float written as null: the common case, without a walk)
        return data
    infinite: list[str] = []
    raw = _json_numbers(msgspec.to_builtins(program), "$", "<program>", infinite)
    if not infinite:
        return data  # (a null of the schema's own, or a name holding "null")
    try:
        return _encoder.encode(msgspec.convert(raw, Program))
    except msgspec.ValidationError as e:  # inf in a field whose number is finite (an arrival time, a preset)
        at = re.search(r" - at '(\$[^']*)'$", _quote(str(e)))
        path = at.group(1) if at else "$"
        raise at_path("<program>", "the number is infinite, which this field of the IR cannot hold", path) \
            from None


def encode_pretty(program: Program, *, spans: bool = True) -> str:
    """The program as indented JSON (what ``serq ir`` prints)."""
    return msgspec.json.format(encode(program, spans=spans), indent=2).decode()


def decode(data: bytes | str, *, name: str = "<ir>", check: bool = True) -> Program:
    """Decode and validate IR JSON (the schema, then that no object gives a key twice, then every
    reference: :func:`serq_ir.validate.validate`). Any fault raises :class:`IRError` with one line naming
    ``name``.

    ``check=False`` decodes the schema alone, for IR serQ wrote itself that what uses it checks again (the
    compile cache's entries, which ``serq_sim.run`` validates as it validates a fresh compile)."""
    from serq.shared import collector_raised

    with collector_raised():  # (its nodes live as long as the program: serq.shared.WORK_GC_THRESHOLD)
        return _decode(data, name, check)


def _decode(data: bytes | str, name: str, check: bool) -> Program:
    _switch("check", check)
    if not isinstance(name, str):  # (it names the IR in every message)
        raise TypeError(f"decode()'s name is a str, not {type(name).__name__}")
    if isinstance(data, str):
        try:
            data = data.encode()
        except UnicodeEncodeError as e:  # a lone surrogate (text decoded with surrogateescape)
            raise IRError(f"error: {name}: the text is not Unicode: {e.object[e.start]!r} at character "
                          f"{e.start + 1}") from None
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):  # (an int or a dict was an AttributeError of startswith)
        raise TypeError(f"decode() takes the IR's JSON as bytes or str, not {type(data).__name__}")
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark, which JSON readers may ignore (RFC 8259)
        data = data[3:]
    try:
        head = _version_decoder.decode(data)
    except msgspec.DecodeError as e:
        raise _decode_error(data, name, e) from None
    except RecursionError:
        _too_deep(data, name)
    if head.version != IR_VERSION:
        if check:  # ("version": 2, "version": 3 is a key given twice, not a version from elsewhere)
            _keys_once(data, name)
        other = _other_json(data) if head.version is None else None
        if other is not None:
            raise at_path(name, f"not a program's IR but {other}; serq check, run, sweep "
                          "and compare read a program (.sq) or its IR (.ir.json, as serq ir writes it)", "$")
        shown = json.dumps(head.version)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}… ({len(shown)} characters)"  # (10**400: all of it)
        raise at_path(name, f"IR version {shown} is not supported (this serq-ir reads version {IR_VERSION})",
                      "$.version")
    try:
        program = _decoder.decode(data)
    except msgspec.DecodeError as e:
        raise _decode_error(data, name, e) from None
    except RecursionError:
        _too_deep(data, name)
    if not check:
        return program
    from .validate import too_many_members, validate

    many = too_many_members(program)  # (before the scan of every key: a program too big is refused at once)
    if many is not None:
        raise at_path(name, many[1], many[0])
    # an object that gives a key twice is refused at the second key, whatever gave the bytes (a file,
    # serq_ir.load; a program's own caller): msgspec keeps the last
    _keys_once(data, name)

    return validate(program, name=name)


#: how deep the path of a JSON text nesting too deeply to decode is given
JSON_DEPTH = 500


def _too_deep(data: bytes, name: str) -> None:
    raise at_path(name, "the JSON nests too deeply to be read (an IR program's expressions nest at most 64 deep, "
                  "its blocks 32)", _deep_path(data, JSON_DEPTH)) from None


def _json_opens(data: bytes, stack: list[list]) -> Iterator[re.Match[bytes]]:
    """Each ``{`` and ``[`` of the JSON text ``data`` (its match), in order, with ``stack`` (the caller's list:
    ``[kind, key or index]`` of each container open around it, outermost first) as it is before the
    container opens; scanned without recursion, so a text nesting too deeply to decode is walked too."""
    from serq.jsonin import STRING

    key = None
    # (a string by possessive runs: a repeat of a group of one character kept a backtracking point each)
    for m in re.finditer(STRING.encode() + rb'|[{}\[\],:]', data):
        tok = m.group()
        if tok[:1] == b'"':
            key = tok
            continue
        if tok in (b"{", b"["):
            yield m
            stack.append([tok, None if tok == b"{" else 0])
        elif tok in (b"}", b"]"):
            if stack:
                stack.pop()
        elif tok == b":" and stack:
            try:
                stack[-1][1] = json.loads(key)
            except (ValueError, TypeError):
                stack[-1][1] = "?"
        elif tok == b"," and stack and stack[-1][0] == b"[":
            stack[-1][1] += 1


def _deep_path(data: bytes, limit: int) -> str:
    """The JSON path (``$.session[0].value.arg…``) where ``data`` first nests ``limit`` deep (scanned without
    recursion; ``$`` when it never does)."""
    stack: list[list] = []
    for _ in _json_opens(data, stack):
        if len(stack) >= limit:
            break
    path = "$"
    for kind, k in stack[:-1] if stack else []:
        path += f"[{k}]" if kind == b"[" else f".{k}"
    return path


def load(path: str | Path, *, check: Callable[[Program], tuple[str, str] | None] | None = None) -> Program:
    """Read, decode and check an ``.ir.json`` file, as ``serq check`` and ``serq run`` read one (they call
    this): only a regular file (a symbolic link to one included) of at most
    :data:`serq.files.MAX_JSON` bytes (256 MiB), read through :func:`serq.files.read_input`, the one rule
    for every file a user gives; an object that gives a key twice is refused at the second key. Any fault
    (a missing file, a FIFO, a device, a folder, a file too large, malformed or invalid IR) raises
    :class:`IRError`, one message naming the file, at once: a FIFO was waited on for ever, ``/dev/zero``
    read until memory ran out and a sparse file of 1 GiB read whole. A fault at a JSON path (a schema fault,
    a reference the program does not have, ``check``'s) is told at the value's line and column, the line
    quoted with a caret (:func:`locate`).

    ``check``: a further check of the decoded program, ``(JSON path, message)`` of its first fault or None
    (the loader of ``serq``: an extension no installed plugin registers)."""
    import os
    from pathlib import Path

    from serq.files import MAX_JSON, read_input

    given = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(given, str):  # (None, an int, bytes: pathlib's TypeError)
        raise TypeError(f"load() takes the IR file's path, a str or os.PathLike, not {type(path).__name__}"
                        + (" naming bytes" if isinstance(path, os.PathLike) else ""))
    if not given:  # (pathlib read '' as '.': "error: .: cannot read")
        raise ValueError("load()'s path is empty: it names no file")
    name = str(Path(path))
    try:
        data = read_input(path, limit=MAX_JSON, what="an IR file")
    except OSError as e:
        from serq.errors import missing_file_note, shown_path

        note = missing_file_note(name) if isinstance(e, FileNotFoundError) else ""
        raise IRError(f"error: {shown_path(name)}: cannot read: {e.strerror or e}{note}") from None
    from serq.errors import shown_path

    shown = shown_path(name)  # the name as the messages print it (a long one was printed whole in each)
    try:
        program = decode(data, name=shown)
        found = check(program) if check is not None else None
        if found is not None:
            at, message = found
            raise at_path(shown, message, at if at.startswith("$") else f"$.{at}")
    except IRError as e:
        raise locate(data, e, shown) from None
    return placed(written_origins(program, name), data, shown)


def placed(program: Program, data: bytes, name: str) -> Program:
    """``program``, read from the IR text ``data`` of the file ``name``, with each node that has no span
    (``serq ir --no-spans``, or spans deleted by hand) given one at its own place in that file: the line and
    column of its object there. A run-time error at such a node was told at no place (``p.sq: error: at t=0,
    session 0: stage E: the iteration's cost is NaN …``, the program's source named and nothing more); it is
    told there now, as a fault of the file is, its JSON path after it (``x.ir.json:35:17: error: at t=0, …
    - at '$.stages[0].kind.cost'``: :func:`serq.errors.located`, which reads the path :data:`serq.errors.PLACED`
    holds for the span). The one rule of every command that reads an IR file (:func:`load`); a program whose
    nodes all have spans is returned as it is. ``serq ir`` of such a file leaves those spans out again
    (:func:`unplaced`). A file's line is not quoted under the message (only a ``.sq`` file is)."""
    wanted = _spanless(program)
    if not wanted:
        return program
    from serq.errors import place_spans

    at: dict[tuple, tuple[int, int]] = {}
    stack: list[list] = []
    line, last = 1, 0
    for m in _json_opens(data, stack):
        if m.group() == b"{":
            path = tuple(k for _kind, k in stack)
            if path in wanted:
                off = m.start()
                line += data.count(b"\n", last, off)
                last = off
                line_start = data.rfind(b"\n", 0, off) + 1
                at[path] = (line, len(data[line_start:off].decode("utf-8", errors="replace")) + 1)
    if not at:
        return program
    tree = msgspec.to_builtins(program)
    places: dict[tuple, str] = {}
    for path, (ln, col) in at.items():
        node = tree
        for step in path:
            node = node[step]
        node["span"] = [name, ln, col]
        places[Span(name, ln, col)] = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    placed_program = msgspec.convert(tree, Program)
    place_spans(name, places)
    return placed_program


def unplaced(program: Program) -> Program:
    """``program`` without the spans :func:`placed` gave it (``serq ir`` of an IR file without spans writes
    none)."""
    from serq.errors import PLACED

    if not PLACED:
        return program
    tree = msgspec.to_builtins(program)
    found = False
    todo = [tree]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            span = x.get("span")
            if isinstance(span, (list, tuple)) and len(span) == 3 and tuple(span) in PLACED:
                del x["span"]
                found = True
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return msgspec.convert(tree, Program) if found else program


#: the struct types whose ``span`` field holds a node's place (a :class:`Span`; a run's is its settings')
_PLACEABLE: dict[type, bool] = {}


def _spanless(program: Program) -> set[tuple]:
    """The JSON paths, as tuples of keys and indices, of the nodes of ``program`` whose ``span`` is None."""
    out: set[tuple] = set()
    todo: list[tuple[Any, tuple]] = [(program, ())]
    while todo:
        x, path = todo.pop()
        if isinstance(x, msgspec.Struct):
            t = type(x)
            fields = t.__struct_fields__
            if "span" in fields:
                placeable = _PLACEABLE.get(t)
                if placeable is None:
                    info = {f.name: f.type for f in msgspec.structs.fields(t)}
                    placeable = _PLACEABLE[t] = Span in getattr(info["span"], "__args__", ())
                if placeable and x.span is None:
                    out.add(path)
            for f, enc in zip(fields, t.__struct_encode_fields__):
                if f == "span":
                    continue
                v = getattr(x, f)
                if isinstance(v, (msgspec.Struct, list, dict)) or (isinstance(v, tuple) and not isinstance(v, Span)):
                    todo.append((v, (*path, enc)))
        elif isinstance(x, (list, tuple)):
            todo.extend((v, (*path, i)) for i, v in enumerate(x)
                        if isinstance(v, (msgspec.Struct, list, tuple, dict)) and not isinstance(v, Span))
        elif isinstance(x, dict):
            todo.extend((v, (*path, k)) for k, v in x.items() if isinstance(v, (msgspec.Struct, list, tuple, dict)))
    return out


def written_origins(program: Program, name: str) -> Program:
    """``program``, read from the IR file ``name``, with each run setting an option gave when the file was
    written (``serq ir p.sq --horizon 4``: its ``RunSpans`` origin ``"--horizon 4"``) named as the file's:
    ``"x.ir.json's run setting horizon, given as --horizon 4 when it was written"``. A later ``serq run
    x.ir.json`` was not given that option, and its errors named it as if it had been (``warmup 10 is not
    below the horizon 4 (--horizon 4)``). An origin already so named, or a span in the run block, is kept;
    an option of the later command replaces the origin of its setting (serq.loading.apply_run_overrides)."""
    import msgspec

    spans = program.run.span
    if spans is None:
        return program
    changes = {k: f"{name}'s run setting {k}, given as {v} when it was written" for k in spans.__struct_fields__
               if isinstance(v := getattr(spans, k), str) and v.startswith("--")}
    if not changes:
        return program
    run = msgspec.structs.replace(program.run, span=msgspec.structs.replace(spans, **changes))
    return msgspec.structs.replace(program, run=run)


def _keys_once(data: bytes, name: str) -> None:
    """Refuse (IRError, at the second key) an IR file an object of which gives a key twice: msgspec keeps
    the last (``"horizon": 5, … "horizon": 100`` ran to 100), as a program that gives a setting twice is
    refused. ``data`` is JSON msgspec has decoded."""
    from serq.jsonin import JSONDuplicateKey, check_keys

    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        check_keys(text)
    except JSONDuplicateKey as e:
        raise IRError(e.message(text, name)) from None
    except (ValueError, RecursionError):  # pragma: no cover - msgspec read it: json's own limits
        pass


#: the keys of the IR that hold a source span: every node's ``span``, and the program's ``share_span``
_SPAN_KEYS = frozenset(("span", "share_span"))


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in _SPAN_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _without_spans(program: Program) -> Program:
    """``program``, as :func:`conform` typed it, without source spans: its builtins (``msgspec.to_builtins``)
    without their ``span`` keys, read back; through the IR's own JSON (an infinite float written ``"inf"``)
    when they hold a value msgspec writes as ``null``. (Decoding the program's JSON text was the slower way
    to the same builtins: half of a ``serq run``'s digest of its program.)"""
    data = _encoder.encode(_strip(msgspec.to_builtins(program)))
    if b"null" in data:  # (an infinite float, or a None: the JSON the IR writes)
        data = _encoder.encode(_strip(msgspec.json.decode(_typed_json(program))))
    return _decoder.decode(data)


def strip_spans(program: Program) -> Program:
    """The same program without source spans (IR equivalence is judged on this)."""
    if not isinstance(program, Program):  # (None, a str: msgspec's ValidationError "Expected `object`")
        raise TypeError(f"strip_spans() takes a serq_ir.Program, not {type(program).__name__}")
    # held to the schema first, as encode holds it (a numpy number was msgspec's TypeError here, an infinite
    # float a ValidationError of the null it was written as)
    from serq.shared import collector_raised

    with collector_raised():
        return _without_spans(conform(program))


def schema() -> dict[str, Any]:
    """The JSON Schema of the IR."""
    return msgspec.json.schema(Program)
