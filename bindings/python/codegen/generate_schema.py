#!/usr/bin/env python3
"""Generates ``libacp/schema.py`` (TypedDicts for the ACP v1 types) and
``libacp/_methods.py`` (the typed API's Python method name of each ACP
method) from the ACP JSON schema.

    python bindings/python/codegen/generate_schema.py            # rewrite
    python bindings/python/codegen/generate_schema.py --check    # exit 1 on drift

Input: ``spec/ts-sdk-2.4.0/v1/schema.unstable.json`` (the v1 schema with the
unstable extensions, as the TypeScript SDK 2.4.0 ships it) and, to tell
what is stable, ``spec/ts-sdk-2.4.0/v1/schema.json`` (the stable v1
schema). The method tables come from the definitions' ``x-method`` and
``x-side`` (the side that handles the method; side ``protocol``,
the engine's ``$/cancel_request``, is left out): a method is a
notification when its params are a ``...Notification`` and it has no
``...Response`` (``mcp/message`` is a request the client handles and a
notification the agent handles), and stable when ``schema.json`` has it
on the same side. The side ``proxy`` (proxy chains: between a conductor
and its proxies) has its own table, keyed by wire name and kind
(``proxy/successor`` is a request and a notification, handled by both
roles; see PROXY_HANDLED_BY). Output: ``bindings/python/python/libacp/schema.py``
and ``bindings/python/python/libacp/_methods.py``. The test suite runs
``--check`` so the committed modules cannot drift from the spec.

Unstable definitions (not in ``schema.json``), members and variants (whose
description starts with ``**UNSTABLE**``) get docs starting "Unstable:".

Mapping (see the module docstring written below for the user's view):

* an object type becomes a ``TypedDict`` (required members as declared,
  the others optional); its wire names are kept (``sessionId``);
* a union of object variants tagged by a constant member (``type``,
  ``sessionUpdate``, ``outcome``...) becomes one ``TypedDict`` per variant,
  with the members of the variant flattened in and the tag as a ``Literal``,
  plus a ``Union`` alias; catch-all variants for future tags are left out of
  the static union (at run time any dict passes through);
* a union of constant strings becomes a ``Literal`` alias; other unions
  become ``Union`` aliases; scalars become aliases of ``str``/``int``/...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "spec" / "ts-sdk-2.4.0" / "v1"
SCHEMA = SPEC / "schema.unstable.json"
STABLE_SCHEMA = SPEC / "schema.json"
OUTPUT = ROOT / "bindings" / "python" / "python" / "libacp" / "schema.py"
METHODS_OUTPUT = ROOT / "bindings" / "python" / "python" / "libacp" / "_methods.py"

# The Python method names of the typed API (``libacp/_methods.py``). A wire
# name ``<namespace>/<verb>[_<rest>]`` whose verb is one of VERB_FIRST is
# named verb first (``session/new`` -> ``new_session``, ``session/set_mode``
# -> ``set_session_mode``, ``terminal/kill`` -> ``kill_terminal``), and a
# name without a namespace is kept (``initialize``); the others are named in
# PYTHON_NAMES (as in the official Python SDK where it has the method, as in
# libacp's Rust typed API, core/src/typed.rs, where it does not). A method
# of the schema that neither names, and an entry of PYTHON_NAMES that the
# schema does not have, are errors: the generator fails.
VERB_FIRST = (
    "new",
    "load",
    "resume",
    "close",
    "delete",
    "set",
    "create",
    "release",
    "kill",
    "fork",
    "archive",
    "unarchive",
)
PYTHON_NAMES = {
    "session/list": "list_sessions",
    "session/prompt": "prompt",
    "session/cancel": "cancel",
    "session/request_permission": "request_permission",
    "session/update": "session_update",
    "fs/read_text_file": "read_text_file",
    "fs/write_text_file": "write_text_file",
    "terminal/output": "terminal_output",
    "terminal/wait_for_exit": "wait_for_terminal_exit",
    "elicitation/complete": "elicitation_complete",
    # Unstable.
    "session/status": "session_status",
    "auth/status": "auth_status",
    "auth/status_update": "auth_status_update",
    "providers/list": "list_providers",
    "providers/set": "set_provider",
    "providers/disable": "disable_provider",
    "mcp/message": "mcp_message",
    "proxy/initialize": "proxy_initialize",
    "proxy/successor": "proxy_successor",
}

# The proxy-chain methods (the schema's side ``proxy``, unstable feature
# ``unstable_proxy_chains``) and the roles that handle them. A proxy is an
# agent-role connection to its conductor, a conductor a client-role
# connection to each proxy: the conductor sends ``proxy/initialize`` (the
# proxy handles it), ``proxy/successor`` goes both ways (a proxy forwards to
# its successor, the conductor delivers from it). The schema says only
# "proxy"; this is what libacp's core routes (PROXY_ROWS in
# core/src/protocol/methods.rs). A proxy method of the schema missing here,
# or the reverse, is an error. Where a method is a request and a
# notification, the notification's Python name ends in ``_notification``
# (``proxy_successor_notification``, as in the Rust typed API).
PROXY_HANDLED_BY = {
    "proxy/initialize": ("agent",),
    "proxy/successor": ("agent", "client"),
}

# JSON-RPC envelopes: the binding's connection handles these itself.
SKIP = {
    "AgentRequest",
    "AgentResponse",
    "AgentNotification",
    "ClientRequest",
    "ClientResponse",
    "ClientNotification",
    "ExtRequest",
    "ExtResponse",
    "ExtNotification",
    "ProxyRequest",
    "ProxyResponse",
    "ProxyNotification",
}

Defs = Dict[str, Dict[str, Any]]
Field = Tuple[str, bool, str]  # (python type, required, doc)


def camel(text: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", text)
    out = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return out if out and not out[0].isdigit() else "V" + out


UNSTABLE_MARK = "**UNSTABLE**"
UNSTABLE_BOILERPLATE = "This capability is not part of the spec yet"


def first_paragraph(desc: Optional[str], unstable: bool = False, fallback: str = "") -> str:
    """The first paragraph of a description (``fallback`` without one),
    starting "Unstable:" when ``unstable`` or when the description starts
    with the schema's ``**UNSTABLE**`` mark (whose boilerplate paragraph is
    skipped)."""
    paras = [p.strip() for p in (desc or "").strip().split("\n\n") if p.strip()]
    if paras and paras[0].startswith(UNSTABLE_MARK):
        unstable = True
        rest = paras[0][len(UNSTABLE_MARK) :].strip()
        paras = ([rest] if rest else []) + paras[1:]
        if paras and paras[0].startswith(UNSTABLE_BOILERPLATE):
            paras = paras[1:]
    para = paras[0] if paras else ""
    if para.startswith("See protocol docs"):
        para = ""
    text = " ".join(line.strip() for line in para.splitlines()) or fallback
    if unstable:
        return f"Unstable: {text}" if text else "Unstable."
    return text


class Generator:
    def __init__(self, defs: Defs, stable_defs: Defs) -> None:
        self.defs = defs
        self.stable_defs = stable_defs
        self.out: List[str] = []
        self.names: Dict[str, str] = {}  # generated name -> where from
        self.exports: List[str] = []

    # ------------------------------------------------------------ types

    def ref_name(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.defs:
            raise SystemExit(f"unknown $ref {ref}")
        if name in SKIP:
            return "Any"
        return name

    def type_of(self, s: Any) -> str:
        """The Python type expression for a schema used inside a TypedDict
        member or an alias (names of generated types are quoted: forward
        references are fine in both places)."""
        if s is True or s == {} or s is None:
            return "Any"
        if "$ref" in s:
            name = self.ref_name(s["$ref"])
            return name if name == "Any" else repr(name)
        if "const" in s:
            return f"Literal[{json.dumps(s['const'])}]"
        if "enum" in s:
            return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"]) + "]"
        if "allOf" in s and len(s["allOf"]) == 1 and "properties" not in s:
            return self.type_of(s["allOf"][0])
        for key in ("anyOf", "oneOf"):
            if key in s and "properties" not in s:
                return self.union([self.type_of(v) for v in s[key]])
        t = s.get("type")
        if isinstance(t, list):
            return self.union([self.type_of({**s, "type": one}) for one in t])
        if t == "string":
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        if t == "array":
            return f"List[{self.type_of(s.get('items', {}))}]"
        if t == "object":
            return "Dict[str, Any]"
        return "Any"

    @staticmethod
    def union(types: List[str]) -> str:
        seen: List[str] = []
        for t in types:
            if t not in seen:
                seen.append(t)
        if "Any" in seen:
            return "Any"
        literals = [t for t in seen if t.startswith("Literal[")]
        if len(literals) > 1:  # Literal["a"], Literal["b"] -> Literal["a", "b"]
            merged = "Literal[" + ", ".join(t[len("Literal[") : -1] for t in literals) + "]"
            seen = [merged if t == literals[0] else t for t in seen if t not in literals[1:]]
        if len(seen) == 1:
            return seen[0]
        if "None" in seen:
            rest = [t for t in seen if t != "None"]
            inner = rest[0] if len(rest) == 1 else "Union[" + ", ".join(rest) + "]"
            return f"Optional[{inner}]"
        return "Union[" + ", ".join(seen) + "]"

    # ----------------------------------------------------------- fields

    def fields(self, s: Dict[str, Any], optional_all: bool = False) -> Dict[str, Field]:
        """The members of an object schema, following ``allOf`` references.
        Members of nested unions (a scope that is one of several shapes) are
        added as optional."""
        out: Dict[str, Field] = {}
        for part in s.get("allOf", []):
            target = self.defs[self.ref_name(part["$ref"])] if "$ref" in part else part
            out.update(self.fields(target, optional_all))
        required = set(s.get("required", []))
        for name, prop in s.get("properties", {}).items():
            doc = "" if name == "_meta" else first_paragraph(prop.get("description"))
            out[name] = (self.type_of(prop), name in required and not optional_all, doc)
        if "properties" in s or "allOf" in s:
            for key in ("anyOf", "oneOf"):
                for variant in s.get(key, []):
                    if self.is_object_variant(variant) and not self.is_catch_all(variant):
                        for n, f in self.fields(variant, True).items():
                            out.setdefault(n, f)
        return out

    def is_object(self, s: Dict[str, Any]) -> bool:
        if s.get("type") == "object" or "properties" in s:
            return True
        if "allOf" in s and all("$ref" in p for p in s["allOf"]):
            return all(self.is_object(self.defs[self.ref_name(p["$ref"])]) for p in s["allOf"])
        return False

    def is_object_variant(self, v: Dict[str, Any]) -> bool:
        return self.is_object(v)

    @staticmethod
    def is_catch_all(v: Dict[str, Any]) -> bool:
        return "not" in v or v.get("title") == "other"

    @staticmethod
    def tag_of(v: Dict[str, Any]) -> Optional[Tuple[str, str]]:
        for name, prop in v.get("properties", {}).items():
            if isinstance(prop, dict) and "const" in prop and isinstance(prop["const"], str):
                return name, prop["const"]
        return None

    # ------------------------------------------------------------ emit

    def claim(self, name: str, origin: str) -> None:
        if name in self.names:
            raise SystemExit(f"name clash: {name} ({origin} and {self.names[name]})")
        self.names[name] = origin

    def emit_typeddict(self, name: str, doc: str, fields: Dict[str, Field]) -> None:
        self.claim(name, "typeddict")
        self.exports.append(name)
        required = {k: v for k, v in fields.items() if v[1]}
        optional = {k: v for k, v in fields.items() if not v[1]}
        valid = all(k.isidentifier() and not keyword.iskeyword(k) for k in fields)
        if not valid:

            def items(fs: Dict[str, Field]) -> str:
                return ", ".join(f"{json.dumps(k)}: {t}" for k, (t, _, _) in fs.items())

            if required and optional:
                base = f"_{name}Required"
                self.out.append(f"{base} = TypedDict({name!r}, {{{items(required)}}})")
                self.out.append(f"class {name}({base}, total=False):")
                self.out.append(self.docstring(doc))
                for k, (t, _, _d) in optional.items():
                    self.out.append(f"    {k}: {t}")
            else:
                total = "" if required else ", total=False"
                self.out.append(f"{name} = TypedDict({name!r}, {{{items(fields)}}}{total})")
            self.out.append("")
            return
        if required and optional:
            base = f"_{name}Required"
            self.out.append(f"class {base}(TypedDict):")
            self.out.append(self.members(required))
            self.out.append("")
            self.out.append("")
            self.out.append(f"class {name}({base}, total=False):")
        elif required:
            self.out.append(f"class {name}(TypedDict):")
        else:
            self.out.append(f"class {name}(TypedDict, total=False):")
        self.out.append(self.docstring(doc))
        if required and optional:
            self.out.append(self.members(optional))
        elif fields:
            self.out.append(self.members(fields))
        self.out.append("")
        self.out.append("")

    @staticmethod
    def docstring(doc: str) -> str:
        doc = doc.replace("\\", "\\\\").replace('"""', "'''") or "(no description)"
        lines = wrap(doc, 72)
        if len(lines) == 1:
            return f'    """{lines[0]}"""'
        return (
            '    """' + lines[0] + "\n" + "\n".join("    " + ln for ln in lines[1:]) + '\n    """'
        )

    @staticmethod
    def members(fields: Dict[str, Field]) -> str:
        lines = []
        for k, (t, _, d) in fields.items():
            if d:
                for ln in wrap(d, 70):
                    lines.append(f"    # {ln}")
            lines.append(f"    {k}: {t}")
        return "\n".join(lines)

    def emit_alias(self, name: str, doc: str, expr: str) -> None:
        self.claim(name, "alias")
        self.exports.append(name)
        if doc:
            for ln in wrap(doc, 76):
                self.out.append(f"# {ln}")
        if expr.startswith("'"):  # a lone forward reference is not a type alias
            expr = f"Union[{expr}]"
        self.out.append(f"{name} = {expr}")
        self.out.append("")
        self.out.append("")

    def emit_def(self, name: str, s: Dict[str, Any]) -> None:
        unstable = name not in self.stable_defs
        doc = first_paragraph(s.get("description"), unstable)
        variants = s.get("oneOf") or s.get("anyOf")
        object_variants = variants and any(self.is_object_variant(v) for v in variants)
        if variants and object_variants:
            base = {k: v for k, v in s.items() if k not in ("oneOf", "anyOf", "discriminator")}
            base_fields = self.fields(base) if "properties" in base else {}
            members: List[str] = []
            for v in variants:
                if self.is_catch_all(v):
                    continue
                if not self.is_object_variant(v):
                    members.append(self.type_of(v))
                    continue
                tag = self.tag_of(v)
                extra = set(v) - {"description", "title", "allOf"}
                if tag is None and not extra and not base_fields and len(v.get("allOf", [])) == 1:
                    members.append(self.type_of(v["allOf"][0]))  # a plain reference
                    continue
                label = tag[1] if tag else v.get("title") or "variant"
                vname = camel(label) + name
                if vname in self.defs:  # e.g. "string" + MultiSelectItems
                    vname = name + camel(label)
                fields = dict(base_fields)
                fields.update(self.fields(v))
                if tag:  # the tag first, as a Literal
                    tdoc = fields[tag[0]][2]
                    fields = {
                        tag[0]: (f"Literal[{json.dumps(tag[1])}]", True, tdoc),
                        **{k: f for k, f in fields.items() if k != tag[0]},
                    }
                vdoc = first_paragraph(v.get("description"), unstable, f"{name}: {label}.")
                self.emit_typeddict(vname, vdoc, fields)
                members.append(repr(vname))
            self.emit_alias(name, doc, self.union(members))
            return
        if self.is_object(s) and "properties" in s:
            self.emit_typeddict(name, doc, self.fields(s))
            return
        if s.get("type") == "object":
            self.emit_alias(name, doc, "Dict[str, Any]")
            return
        self.emit_alias(name, doc, self.type_of(s))

    def run(self, digest: str) -> str:
        for name in self.defs:
            if name in SKIP:
                continue
            self.emit_def(name, self.defs[name])
        head = HEADER.format(digest=digest)
        methods = self.method_tables()
        exports = (
            "__all__ = [\n"
            + "".join(
                f"    {n!r},\n"
                for n in sorted(self.exports + ["AGENT_METHODS", "CLIENT_METHODS", "PROXY_METHODS"])
            )
            + "]\n"
        )
        body = "\n".join(self.out).rstrip() + "\n"
        return head + "\n" + body + "\n\n" + methods + "\n\n" + exports

    def method_tables(self) -> str:
        """``AGENT_METHODS``/``CLIENT_METHODS``: wire method -> (params type,
        result type or None for a notification), from the schema's
        ``x-side``/``x-method`` annotations."""
        tables = schema_methods(self.defs)
        out = []
        for side in SIDES:
            doc = (
                "Methods the agent implements (the client calls them)"
                if side == "agent"
                else "Methods the client implements (the agent calls them)"
            )
            out.append(f"#: {doc}: wire name -> (params type, result type; None for a")
            out.append("#: notification). The unstable ones are in ``libacp.UNSTABLE_METHODS``.")
            out.append(f"{side.upper()}_METHODS: Dict[str, Tuple[str, Optional[str]]] = {{")
            for method in sorted(tables[side]):
                p, r = tables[side][method]
                out.append(f"    {json.dumps(method)}: ({p!r}, {r!r}),")
            out.append("}")
            out.append("")
        out.append("#: The proxy-chain methods (unstable ``unstable_proxy_chains``; the schema's")
        out.append("#: side ``proxy``, between a conductor and its proxies): (wire name,")
        out.append("#: notification?) -> (params type, result type; None for a notification).")
        out.append("PROXY_METHODS: Dict[Tuple[str, bool], Tuple[str, Optional[str]]] = {")
        for (method, notification), (p, r) in sorted(proxy_methods(self.defs).items()):
            out.append(f"    ({json.dumps(method)}, {notification}): ({p!r}, {r!r}),")
        out.append("}")
        return "\n".join(out).rstrip() + "\n"


#: The sides whose methods the typed API has in ``AGENT_METHODS`` and
#: ``CLIENT_METHODS`` (``x-side``); ``protocol`` (``$/cancel_request``, the
#: engine's) is neither an agent's nor a client's, and ``proxy`` (between a
#: conductor and its proxies) has its own table (``proxy_methods``).
SIDES = ("agent", "client")


def schema_methods(defs: Defs) -> Dict[str, Dict[str, Tuple[str, Optional[str]]]]:
    """The methods each side handles, from the definitions' ``x-side`` and
    ``x-method``: side -> wire name -> (params type, result type; None for a
    notification). A method's params are its ``...Request`` or
    ``...Notification`` definition, its result the ``...Response`` one; a
    method without params, or with a result and notification params, is an
    error."""
    found: Dict[str, Dict[str, List[Optional[str]]]] = {side: {} for side in SIDES}
    for name, s in defs.items():
        side, method = s.get("x-side"), s.get("x-method")
        if side not in found or not method:
            continue
        entry = found[side].setdefault(method, [None, None])
        slot = 1 if name.endswith("Response") else 0
        if entry[slot] is not None:
            raise SystemExit(f"{side} method {method}: two definitions ({entry[slot]}, {name})")
        entry[slot] = name
    tables: Dict[str, Dict[str, Tuple[str, Optional[str]]]] = {side: {} for side in SIDES}
    for side in SIDES:
        for method, (params, result) in found[side].items():
            if params is None:
                raise SystemExit(f"{side} method {method} has a result type but no params type")
            if (result is None) != params.endswith("Notification"):
                raise SystemExit(f"{side} method {method}: {params} with result {result}")
            tables[side][method] = (params, result)
    return tables


def proxy_methods(defs: Defs) -> Dict[Tuple[str, bool], Tuple[str, Optional[str]]]:
    """The proxy-chain methods (``x-side`` ``proxy``): (wire name,
    notification?) -> (params type, result type; None for a notification).
    A method may be a request (a ``...Request`` and a ``...Response``) and
    a notification (a ``...Notification``) at once. Each must be in
    PROXY_HANDLED_BY, and PROXY_HANDLED_BY must name only these."""
    found: Dict[Tuple[str, bool], List[Optional[str]]] = {}
    for name, s in defs.items():
        method = s.get("x-method")
        if s.get("x-side") != "proxy" or not method:
            continue
        notification = name.endswith("Notification")
        entry = found.setdefault((method, notification), [None, None])
        slot = 1 if name.endswith("Response") else 0
        if entry[slot] is not None:
            raise SystemExit(f"proxy method {method}: two definitions ({entry[slot]}, {name})")
        entry[slot] = name
    table: Dict[Tuple[str, bool], Tuple[str, Optional[str]]] = {}
    for (method, notification), (params, result) in found.items():
        if params is None or (result is None) != notification:
            raise SystemExit(f"proxy method {method}: params {params} with result {result}")
        table[(method, notification)] = (params, result)
    wires = {method for method, _ in table}
    if wires != set(PROXY_HANDLED_BY):
        raise SystemExit(
            f"proxy methods {sorted(wires)} but PROXY_HANDLED_BY names "
            f"{sorted(PROXY_HANDLED_BY)} (bindings/python/codegen/generate_schema.py)"
        )
    return table


def python_name(wire: str) -> str:
    """The typed API's Python method name of the method ``wire`` (see
    VERB_FIRST and PYTHON_NAMES)."""
    name = PYTHON_NAMES.get(wire)
    if name is None:
        namespace, slash, rest = wire.partition("/")
        verb, _, tail = rest.partition("_")
        if not slash:
            name = wire
        elif verb in VERB_FIRST:
            name = "_".join(part for part in (verb, namespace, tail) if part)
        else:
            raise SystemExit(
                f"no Python name for {wire}: name it in PYTHON_NAMES, or add its verb to "
                "VERB_FIRST (bindings/python/codegen/generate_schema.py)"
            )
    if not name.isidentifier() or keyword.iskeyword(name):
        raise SystemExit(f"{wire}: {name!r} is not a Python method name")
    return name


def methods_module(defs: Defs, stable_defs: Defs, digests: Tuple[str, str]) -> str:
    """``libacp/_methods.py``: ``AGENT_HANDLERS`` and ``CLIENT_HANDLERS``,
    wire name -> Python method name, for the methods of the schema,
    ``AGENT_PROXY_HANDLERS`` and ``CLIENT_PROXY_HANDLERS``, (wire name,
    notification?) -> Python method name, for the proxy-chain methods each
    role handles, and ``UNSTABLE_METHODS``, the wire names of the methods
    the stable schema does not have."""
    tables = schema_methods(defs)
    stable = schema_methods(stable_defs)
    proxy = proxy_methods(defs)
    stable_proxy = {s.get("x-method") for s in stable_defs.values() if s.get("x-side") == "proxy"}
    wires = {wire for side in SIDES for wire in tables[side]} | {m for m, _ in proxy}
    stale = sorted(set(PYTHON_NAMES) - wires)
    if stale:
        raise SystemExit(f"PYTHON_NAMES names methods the schema does not have: {stale}")
    out = [METHODS_HEADER.format(unstable=digests[0], stable=digests[1]).rstrip("\n")]
    unstable = set()
    for side, caller in (("agent", "client"), ("client", "agent")):
        table = {wire: python_name(wire) for wire in sorted(tables[side])}
        if len(set(table.values())) != len(table):
            raise SystemExit(f"two {side} methods have the same Python name: {table}")
        unstable |= set(tables[side]) - set(stable[side])
        out.append("")
        out.append(
            f"#: {side.capitalize()} methods (the {caller} calls them): wire name -> Python method name."
        )
        out.append(f"{side.upper()}_HANDLERS: Dict[str, str] = {{")
        out.extend(f"    {json.dumps(wire)}: {json.dumps(name)}," for wire, name in table.items())
        out.append("}")
    for side, what in (("agent", "a proxy"), ("client", "a conductor")):
        out.append("")
        out.append(f"#: Proxy-chain methods {what} ({side} role) handles: (wire name,")
        out.append("#: notification?) -> Python method name.")
        out.append(f"{side.upper()}_PROXY_HANDLERS: Dict[Tuple[str, bool], str] = {{")
        for method, notification in sorted(proxy):
            if side in PROXY_HANDLED_BY[method]:
                name = python_name(method)
                if notification and (method, False) in proxy:
                    name += "_notification"
                out.append(f"    ({json.dumps(method)}, {notification}): {json.dumps(name)},")
        out.append("}")
    unstable |= {method for method, _ in proxy} - stable_proxy
    out.append("")
    out.append("#: The methods of the unstable v1 extensions (in schema.unstable.json, not in")
    out.append("#: schema.json): the core routes and checks them only on a connection whose")
    out.append("#: ``unstable`` option turns their feature on; otherwise they are extension")
    out.append("#: methods to it (passed to the host unchecked).")
    out.append("UNSTABLE_METHODS: FrozenSet[str] = frozenset(")
    out.append("    {")
    out.extend(f"        {json.dumps(wire)}," for wire in sorted(unstable))
    out.append("    }")
    out.append(")")
    out.append("")
    out.append("__all__ = [")
    for name in (
        "AGENT_HANDLERS",
        "AGENT_PROXY_HANDLERS",
        "CLIENT_HANDLERS",
        "CLIENT_PROXY_HANDLERS",
        "UNSTABLE_METHODS",
    ):
        out.append(f"    {json.dumps(name)},")
    out.append("]")
    return "\n".join(out) + "\n"


def wrap(text: str, width: int) -> List[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return lines or [""]


HEADER = '''\
# Generated by bindings/python/codegen/generate_schema.py from
# spec/ts-sdk-2.4.0/v1/schema.unstable.json (sha256 {digest}).
# Do not edit: regenerate with `python3 bindings/python/codegen/generate_schema.py`.
"""The ACP v1 types, as ``TypedDict``s generated from the JSON schema (the
stable types and those of the unstable extensions, whose docs start
"Unstable:").

Why ``TypedDict`` (and not dataclasses): the values *are* the JSON objects
the wire carries, so

* a plain ``dict`` is accepted wherever a model is (they are the same thing
  at run time), and what the API returns is the decoded JSON itself, with no
  conversion pass on the hot path (a stream of ``session/update``s costs one
  JSON decode per message, done by the Rust core);
* members and variants this version does not know are preserved as they
  are, by construction (nothing is dropped or renamed);
* member names are the wire names (``sessionId``, ``_meta``), so the
  protocol documentation reads the same in Python.

The types are for static checking (mypy, pyright, IDEs); nothing is
validated at run time here: the Rust core validates what the peer sends
and what you send. Unions of tagged variants (``SessionUpdate``,
``ContentBlock``, ...) narrow on their tag: ``if u["sessionUpdate"] ==
"agent_message_chunk": u["content"]``. Variants added by a later schema
are not in the static unions but still arrive as dicts.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

'''


METHODS_HEADER = '''\
# Generated by bindings/python/codegen/generate_schema.py from the x-method
# and x-side of spec/ts-sdk-2.4.0/v1/schema.unstable.json
# (sha256 {unstable}) and
# spec/ts-sdk-2.4.0/v1/schema.json (sha256 {stable}).
# Do not edit: regenerate with `python3 bindings/python/codegen/generate_schema.py`.
"""The typed API's method tables: the Python method (of ``Agent``/``Client``
and of the connections) that handles or calls each ACP method."""

from __future__ import annotations

from typing import Dict, FrozenSet, Tuple
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the output is stale")
    args = ap.parse_args()
    raw, stable_raw = SCHEMA.read_bytes(), STABLE_SCHEMA.read_bytes()
    defs, stable_defs = json.loads(raw)["$defs"], json.loads(stable_raw)["$defs"]
    digests = (hashlib.sha256(raw).hexdigest(), hashlib.sha256(stable_raw).hexdigest())
    outputs = {
        OUTPUT: Generator(defs, stable_defs).run(digests[0]),
        METHODS_OUTPUT: methods_module(defs, stable_defs, digests),
    }
    if args.check:
        stale = [
            path
            for path, text in outputs.items()
            if (path.read_text() if path.exists() else "") != text
        ]
        for path in stale:
            print(
                f"{path.relative_to(ROOT)} is stale: run "
                "python3 bindings/python/codegen/generate_schema.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
