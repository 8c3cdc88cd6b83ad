"""Cypher packs: named, parameterised, read-only graph queries kept in YAML.

A pack lets the agent (and a maintainer) run structural queries — neighbours,
paths, category members — without writing Cypher at question time. Packs are
checked when loaded, so a typo fails with one line naming the file, the line
and the query rather than as a Kùzu error mid-answer:

* the YAML parses, with no duplicate keys, unknown keys or missing keys;
* every ``$name`` in the Cypher is declared in ``params`` and every declared
  param is used (values always travel as parameters, never pasted into text);
* the Cypher is one statement with no write clause (``CREATE``, ``MERGE``,
  ``SET``, ``DELETE``, ``DETACH``, ``REMOVE``, ``DROP``, ``COPY``, ``ALTER``,
  ``INSTALL``, ``LOAD`` …) and ``CALL``\\ s only read-only procedures.

Call-time values are checked against the declared types, bounds and choices
(:meth:`CypherQuery.bind`) before :func:`run_query` hands them to the store.

The format (``cypher_packs/README.md`` has the long form)::

    name: graph_structure          # lower_snake_case
    version: 1                     # int or string
    description: ...
    queries:
      - name: articles_linking_to
        description: ...
        params:
          title: {type: string}                         # required: no default
          limit: {type: int, default: 25, min: 1, max: 500}
        cypher: |
          MATCH (b:Article)-[r:LINKS_TO]->(:Article {title: $title})
          RETURN b.title AS title LIMIT $limit
        returns: [title]

Which questions a pack query answers is read by :mod:`kg_agent.language.intent`;
:mod:`kg_agent.retrieval.structural` binds their names and runs the query.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from kg_agent.exceptions import KGAgentError, one_line

if TYPE_CHECKING:
    pass

__all__ = [
    "PARAM_TYPES",
    "READ_ONLY_PROCEDURES",
    "CypherPack",
    "CypherPackError",
    "CypherQuery",
    "ParamSpec",
    "default_pack",
    "default_pack_dir",
    "load_pack",
    "load_packs",
    "parse_pack",
    "run_query",
]


class CypherPackError(KGAgentError):
    """A pack file is invalid, or a pack query was called with bad parameters."""


PARAM_TYPES = ("string", "int", "float", "bool", "list[string]", "list[int]", "list[float]")
"""The types a pack parameter may declare."""

READ_ONLY_PROCEDURES = frozenset(
    {
        "QUERY_FTS_INDEX",
        "QUERY_VECTOR_INDEX",
        "SHOW_TABLES",
        "SHOW_INDEXES",
        "SHOW_CONNECTION",
        "SHOW_FUNCTIONS",
        "TABLE_INFO",
        "DB_VERSION",
        "CURRENT_SETTING",
    }
)
"""Procedures a pack may ``CALL``: they read the graph or the catalog, never change them."""

# LOAD covers LOAD EXTENSION and LOAD FROM (reads files outside the graph);
# transaction control and ATTACH/USE/EXPORT/IMPORT change what the connection sees.
_WRITE_KEYWORDS = (
    "CREATE",
    "MERGE",
    "SET",
    "DELETE",
    "DETACH",
    "REMOVE",
    "DROP",
    "COPY",
    "ALTER",
    "INSTALL",
    "UNINSTALL",
    "LOAD",
    "ATTACH",
    "USE",
    "EXPORT",
    "IMPORT",
    "CHECKPOINT",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
)
# A keyword preceded by "." or "$" is a property or a parameter, not a clause.
_WRITE_RE = re.compile(r"(?<![.$\w])(" + "|".join(_WRITE_KEYWORDS) + r")\b", re.IGNORECASE)
_CALL_RE = re.compile(r"(?<![.$\w])CALL\b\s*([A-Za-z_][\w.]*)?", re.IGNORECASE)
_PARAM_RE = re.compile(r"\$([A-Za-z_]\w*)")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_COLUMN_RE = re.compile(r"^[A-Za-z_][\w.]*$")
_INT_RE = re.compile(r"^[+-]?\d+$")

_PACK_KEYS = {"name", "version", "description", "queries"}
_QUERY_KEYS = {"name", "description", "params", "cypher", "returns"}
_PARAM_KEYS = {"type", "required", "default", "min", "max", "choices", "description"}
_NUMERIC = ("int", "float")
_MISSING: Any = object()


# ---------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: its type, whether it is required, default and bounds."""

    name: str
    type: str
    required: bool = True
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None
    description: str = ""

    def coerce(self, value: Any) -> Any:
        """``value`` converted to this parameter's type and checked; ValueError says why."""
        if value is None:
            if self.required:
                raise ValueError("is required, got null")
            return None
        if self.type.startswith("list["):
            if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
                raise ValueError(f"must be a list, got {type(value).__name__}")
            item = self.type[5:-1]
            out: list[Any] = []
            for i, v in enumerate(value):
                try:
                    out.append(_coerce_scalar(item, v))
                except ValueError as exc:
                    raise ValueError(f"item {i} {exc}") from None
            result: Any = out
        else:
            result = _coerce_scalar(self.type, value)
            if self.min is not None and result < self.min:
                raise ValueError(f"must be >= {_num(self.min)}, got {_num(result)}")
            if self.max is not None and result > self.max:
                raise ValueError(f"must be <= {_num(self.max)}, got {_num(result)}")
        if self.choices is not None and result not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ValueError(f"must be one of {allowed}, got {result!r}")
        return result


@dataclass(frozen=True)
class CypherQuery:
    """A named read-only Cypher statement with its declared parameters and columns."""

    name: str
    description: str
    cypher: str
    params: tuple[ParamSpec, ...]
    returns: tuple[str, ...]
    pack: str = ""

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def bind(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Parameters for the store: defaults filled in, values coerced and checked.

        Unknown names are refused, since a misspelt optional parameter would
        otherwise be silently replaced by its default.
        """
        label = f"query {self.pack + '.' if self.pack else ''}{self.name}"
        known = {p.name: p for p in self.params}
        unknown = sorted(set(values) - set(known))
        if unknown:
            takes = ", ".join(known) or "no parameters"
            raise CypherPackError(
                f"{label}: unknown parameter{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)} (it takes: {takes})"
            )
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name not in values:
                if p.required:
                    raise CypherPackError(
                        f"{label}: missing required parameter {p.name} ({p.type})"
                    )
                out[p.name] = p.default
                continue
            try:
                out[p.name] = p.coerce(values[p.name])
            except ValueError as exc:
                raise CypherPackError(f"{label}: parameter {p.name} {exc}") from None
        return out


@dataclass(frozen=True)
class CypherPack:
    """A validated pack: its name, version and queries in file order."""

    name: str
    version: str
    description: str
    queries: tuple[CypherQuery, ...]
    source: str = ""

    def names(self) -> tuple[str, ...]:
        return tuple(q.name for q in self.queries)

    def get(self, name: str) -> CypherQuery:
        """The query called ``name``; CypherPackError lists the ones there are."""
        for q in self.queries:
            if q.name == name:
                return q
        raise CypherPackError(
            f"pack {self.name} has no query {name!r} (it has: {', '.join(self.names())})"
        )

    def __contains__(self, name: object) -> bool:
        return any(q.name == name for q in self.queries)

    def __iter__(self) -> Iterator[CypherQuery]:
        return iter(self.queries)


class _QueryRunner(Protocol):
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]: ...


def run_query(
    store: _QueryRunner, pack: CypherPack, name: str, /, **params: Any
) -> list[dict[str, Any]]:
    """Run query ``name`` of ``pack`` with checked ``params``; rows as column → value dicts."""
    query = pack.get(name)
    return store.query(query.cypher, query.bind(params))


# ---------------------------------------------------------------------------- loading

_PACKAGED_DIR = Path(__file__).resolve().parent / "data" / "cypher_packs"
_CHECKOUT_DIR = Path(__file__).resolve().parent.parent / "cypher_packs"
DEFAULT_PACK = "graph_structure"


def default_pack_dir() -> Path:
    """Where the shipped packs are: the copy inside the package, else the checkout's.

    ``cypher_packs/`` at the project root is what a maintainer edits; it is
    outside the package, so an installed wheel carries a byte-identical copy in
    ``kg_agent/data/cypher_packs/`` (a test keeps the two in step).
    """
    return _PACKAGED_DIR if _PACKAGED_DIR.is_dir() else _CHECKOUT_DIR


def default_pack() -> CypherPack:
    """The shipped ``graph_structure`` pack."""
    return load_pack(default_pack_dir() / f"{DEFAULT_PACK}.yaml")


def load_packs(path: str | os.PathLike[str]) -> dict[str, CypherPack]:
    """Packs by name from one YAML file or every ``*.yaml``/``*.yml`` in a directory."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix in (".yaml", ".yml") and f.is_file())
        if not files:
            raise CypherPackError(f"{p}: no *.yaml pack files in this directory")
    elif p.is_file():
        files = [p]
    else:
        raise CypherPackError(f"{p}: no such pack file or directory")
    packs: dict[str, CypherPack] = {}
    for f in files:
        pack = load_pack(f)
        if pack.name in packs:
            raise CypherPackError(
                f"{f}: pack name {pack.name!r} is also used by {packs[pack.name].source}"
            )
        packs[pack.name] = pack
    return packs


def load_pack(path: str | os.PathLike[str]) -> CypherPack:
    """Read and validate one pack file."""
    p = Path(path)
    if not p.is_file():
        raise CypherPackError(f"{p}: no such pack file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CypherPackError(f"{p}: cannot read pack: {one_line(exc)}") from None
    return parse_pack(text, source=str(p))


def parse_pack(text: str, source: str = "<string>") -> CypherPack:
    """Validate pack YAML ``text``; errors name ``source`` and the line."""
    loader = _Loader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise CypherPackError(f"{source}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise CypherPackError(f"{source}: invalid YAML: {one_line(exc)}") from None
    finally:
        loader.dispose()
    return _Validator(source, loader.lines).pack(data)


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and remembers each mapping's line."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
    data: dict[Any, Any] = {}
    loader.lines[id(data)] = node.start_mark.line + 1
    yield data
    seen: set[str] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
            seen.add(key_node.value)
    data.update(loader.construct_mapping(node))


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


class _Validator:
    """Turns parsed YAML into a :class:`CypherPack`, or one-line errors with lines."""

    def __init__(self, source: str, lines: Mapping[int, int]) -> None:
        self.source = source
        self.lines = lines

    def fail(self, where: object, message: str) -> CypherPackError:
        line = self.lines.get(id(where)) if where is not None else None
        loc = f"line {line}: " if line else ""
        return CypherPackError(f"{self.source}: {loc}{message}")

    def keys(
        self, obj: Mapping[str, Any], allowed: set[str], required: set[str], what: str
    ) -> None:
        bad = sorted(str(k) for k in obj if k not in allowed)
        if bad:
            raise self.fail(
                obj,
                f"{what}: unknown key{'s' if len(bad) > 1 else ''} {', '.join(bad)} "
                f"(allowed: {', '.join(sorted(allowed))})",
            )
        missing = sorted(required - set(obj))
        if missing:
            raise self.fail(
                obj, f"{what}: missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            )

    def pack(self, data: Any) -> CypherPack:
        if not isinstance(data, dict):
            raise self.fail(
                None,
                "a pack must be a YAML mapping with name, version, "
                f"description and queries, got {_kind(data)}",
            )
        self.keys(data, _PACK_KEYS, _PACK_KEYS, "pack")
        name = data["name"]
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise self.fail(data, f"pack name must be lower_snake_case, got {name!r}")
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, (int, str)) or not str(version):
            raise self.fail(
                data, f"pack {name}: version must be an integer or a string, got {version!r}"
            )
        description = self.text(data, "description", f"pack {name}")
        queries = data["queries"]
        if not isinstance(queries, list) or not queries:
            raise self.fail(data, f"pack {name}: queries must be a non-empty list")
        out: list[CypherQuery] = []
        seen: dict[str, int] = {}
        for i, q in enumerate(queries):
            query = self.query(q, i, name)
            if query.name in seen:
                first = self.lines.get(id(queries[seen[query.name]]))
                at = f" (first at line {first})" if first else ""
                raise self.fail(q, f"duplicate query name {query.name!r}{at}")
            seen[query.name] = i
            out.append(query)
        return CypherPack(name, str(version), description, tuple(out), self.source)

    def text(self, obj: Mapping[str, Any], key: str, what: str) -> str:
        value = obj[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(obj, f"{what}: {key} must be a non-empty string")
        return " ".join(value.split())

    def query(self, q: Any, index: int, pack: str) -> CypherQuery:
        if not isinstance(q, dict):
            raise self.fail(
                None, f"pack {pack}: queries[{index}] must be a mapping, got {_kind(q)}"
            )
        name = q.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise self.fail(q, f"queries[{index}]: name must be lower_snake_case, got {name!r}")
        what = f"query {name}"
        self.keys(q, _QUERY_KEYS, _QUERY_KEYS - {"params"}, what)
        description = self.text(q, "description", what)
        cypher = q["cypher"]
        if not isinstance(cypher, str) or not cypher.strip():
            raise self.fail(q, f"{what}: cypher must be a non-empty string")
        raw_params = q.get("params") or {}
        if not isinstance(raw_params, dict):
            raise self.fail(q, f"{what}: params must be a mapping of name to spec")
        params = tuple(self.param(spec, str(pname), what, q) for pname, spec in raw_params.items())
        cypher = self.cypher(cypher, params, what, q)
        returns = q["returns"]
        if (
            not isinstance(returns, list)
            or not returns
            or not all(isinstance(c, str) and _COLUMN_RE.match(c) for c in returns)
        ):
            raise self.fail(q, f"{what}: returns must be a non-empty list of column names")
        dup = sorted({c for c in returns if returns.count(c) > 1})
        if dup:
            raise self.fail(q, f"{what}: returns lists {', '.join(dup)} twice")
        return CypherQuery(name, description, cypher, params, tuple(returns), pack)

    def param(self, spec: Any, pname: str, what: str, q: Any) -> ParamSpec:
        if not _NAME_RE.match(pname):
            raise self.fail(q, f"{what}: parameter name must be lower_snake_case, got {pname!r}")
        label = f"{what}: parameter {pname}"
        if not isinstance(spec, dict):
            raise self.fail(q, f"{label}: spec must be a mapping with at least a type")
        self.keys(spec, _PARAM_KEYS, {"type"}, label)
        ptype = spec["type"]
        if ptype not in PARAM_TYPES:
            raise self.fail(
                spec, f"{label}: unknown type {ptype!r} (one of: {', '.join(PARAM_TYPES)})"
            )
        has_default = "default" in spec
        required = spec.get("required", not has_default)
        if not isinstance(required, bool):
            raise self.fail(spec, f"{label}: required must be true or false")
        if required and has_default:
            raise self.fail(spec, f"{label}: a required parameter cannot have a default")
        bounds: dict[str, float | None] = {}
        for key in ("min", "max"):
            b = spec.get(key)
            if b is None:
                bounds[key] = None
                continue
            if ptype not in _NUMERIC:
                raise self.fail(spec, f"{label}: {key} applies to int and float only")
            if isinstance(b, bool) or not isinstance(b, (int, float)):
                raise self.fail(spec, f"{label}: {key} must be a number, got {b!r}")
            bounds[key] = b
        lo, hi = bounds["min"], bounds["max"]
        if lo is not None and hi is not None and lo > hi:
            raise self.fail(spec, f"{label}: min {_num(lo)} is above max {_num(hi)}")
        choices: tuple[Any, ...] | None = None
        if spec.get("choices") is not None:
            raw = spec["choices"]
            if not isinstance(raw, list) or not raw:
                raise self.fail(spec, f"{label}: choices must be a non-empty list")
            probe = ParamSpec(pname, ptype, True, None, lo, hi)
            try:
                choices = tuple(probe.coerce(c) for c in raw)
            except ValueError as exc:
                raise self.fail(spec, f"{label}: a choice {exc}") from None
        desc = spec.get("description", "")
        if not isinstance(desc, str):
            raise self.fail(spec, f"{label}: description must be a string")
        result = ParamSpec(pname, ptype, required, None, lo, hi, choices, " ".join(desc.split()))
        if has_default and spec["default"] is not None:
            try:
                default = result.coerce(spec["default"])
            except ValueError as exc:
                raise self.fail(spec, f"{label}: default {exc}") from None
            result = ParamSpec(pname, ptype, False, default, lo, hi, choices, result.description)
        return result

    def cypher(self, cypher: str, params: Sequence[ParamSpec], what: str, q: Any) -> str:
        text = cypher.strip()
        code = _code_only(text)
        body = code.rstrip()
        if body.endswith(";"):
            body = body[:-1]
            text = text.rstrip()[:-1].rstrip()
        if ";" in body:
            raise self.fail(q, f"{what}: cypher must be one statement (found ';' inside)")
        m = _WRITE_RE.search(code)
        if m:
            raise self.fail(
                q, f"{what}: write clause {m.group(1).upper()} is not allowed (packs are read-only)"
            )
        for call in _CALL_RE.finditer(code):
            proc = call.group(1)
            if proc is None:
                if code[call.end() :].lstrip().startswith("{"):
                    continue  # CALL { subquery }: its body is checked like the rest
                raise self.fail(q, f"{what}: CALL must name a procedure")
            if proc.upper() not in READ_ONLY_PROCEDURES:
                raise self.fail(
                    q,
                    f"{what}: CALL {proc} is not allowed (read-only procedures: "
                    f"{', '.join(sorted(READ_ONLY_PROCEDURES))})",
                )
        used = list(dict.fromkeys(_PARAM_RE.findall(code)))
        declared = [p.name for p in params]
        undeclared = [u for u in used if u not in declared]
        if undeclared:
            raise self.fail(
                q, f"{what}: cypher uses ${', $'.join(undeclared)} not declared in params"
            )
        unused = [d for d in declared if d not in used]
        if unused:
            raise self.fail(
                q, f"{what}: params declares {', '.join(unused)} but the cypher never uses it"
            )
        return text


def _code_only(cypher: str) -> str:
    """``cypher`` with string literals, quoted names and comments blanked out.

    Keyword and ``$param`` scans then see only code: ``'SET'`` in a string, a
    ``// DELETE later`` comment or a backquoted ``create`` property are ignored.
    Lengths are kept so positions still line up.
    """
    out: list[str] = []
    i, n = 0, len(cypher)
    while i < n:
        ch = cypher[i]
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if cypher[j] == "\\" and ch != "`":
                    j += 2
                    continue
                if cypher[j] == ch:
                    if j + 1 < n and cypher[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        elif cypher.startswith("//", i):
            j = cypher.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif cypher.startswith("/*", i):
            j = cypher.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " * (j - i))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _coerce_scalar(ptype: str, value: Any) -> Any:
    if ptype == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise ValueError(f"must be a string, got {type(value).__name__}")
    if ptype == "int":
        if isinstance(value, bool):
            raise ValueError("must be an integer, got bool")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and _INT_RE.match(value.strip()):
            return int(value.strip())
        raise ValueError(f"must be an integer, got {value!r}")
    if ptype == "float":
        if isinstance(value, bool):
            raise ValueError("must be a number, got bool")
        if isinstance(value, (int, float)):
            result = float(value)
        elif isinstance(value, str):
            try:
                result = float(value.strip())
            except ValueError:
                raise ValueError(f"must be a number, got {value!r}") from None
        else:
            raise ValueError(f"must be a number, got {type(value).__name__}")
        if not math.isfinite(result):
            raise ValueError(f"must be a finite number, got {value!r}")
        return result
    if ptype == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
            return _BOOL_WORDS[value.strip().lower()]
        raise ValueError(f"must be true or false, got {value!r}")
    raise ValueError(f"has unknown type {ptype!r}")  # pragma: no cover - validated at load


_BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def _num(x: float) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _kind(obj: object) -> str:
    return "nothing" if obj is None else type(obj).__name__
