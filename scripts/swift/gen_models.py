#!/usr/bin/env python3
"""Generates the Swift `Codable` models of the ACP v1 types from the schema.

    scripts/swift/gen_models.py [--check] [--schema PATH]

Reads the ACP v1 JSON schema (`spec/ts-sdk-2.4.0/v1/schema.unstable.json` by
default: the stable schema plus the unstable extensions, the copy the project
tests against) and writes
`bindings/uniffi/swift/Sources/LibACP/Models.swift`, which is committed;
`--check` fails if the committed file differs from what the schema gives (the
test command runs it, so the models never drift from the schema).

Why a generator of our own: quicktype 23.3.25, the well-kept JSON-Schema-to-
Swift generator, stops on this schema ("Internal error: Unknown type
intersection", also after flattening its `allOf`s), and Apple's
swift-openapi-generator needs its runtime package from GitHub, which this
project's machines cannot reach. The schema's shapes are few and regular, so
the mapping below is short:

* an object type becomes a `struct` with a `var` per property (optional when
  not required), and `extra: [String: JSONValue]` that keeps every member
  the schema does not name, so a decoded value re-encodes without loss;
* a union of string constants becomes an `enum` with a case per constant and
  `unrecognized(String)` for values from a newer protocol;
* a union of string constants with a catch-all string (an open enum) is the
  same `enum`, the catch-all being `unrecognized(String)`;
* a method's params or result that is a union of inline objects without a
  tag (`{"result": ...}` or `{"error": ...}`) becomes one `struct` whose
  members are all optional;
* a union tagged by a constant member (`sessionUpdate`, `type`, `outcome`)
  becomes an `enum` with a case per tag carrying the variant's struct, and
  `unrecognized(JSONValue)` for unknown tags (kept whole);
* a member the schema lets a reader drop when it does not decode
  (`x-deserialize-default-on-error`: a malformed `usage` from a peer that
  does not speak that extension) is `nil` then, and kept in `extra` as it
  came (re-encoded as it was while the member stays `nil`);
* a member that may hold any value (`{}`) is `JSONValue?`: `nil` when it is
  absent, `.null` when it is `null`;
* a string type alias (ids) becomes `typealias X = String`;
* a definition that is another one under a new name (`allOf` of one `$ref`
  and nothing else: `InitializeProxyRequest` is `InitializeRequest`) becomes
  a `typealias` of it;
* a definition that allows any value (`{}`: the result of `proxy/successor`,
  an extension's params) is `typealias X = JSONValue`;
* anything else (untagged unions, JSON-RPC envelopes) is `JSONValue`.
"""

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts/lib"))
from schema_shapes import alias_of, allows_anything  # noqa: E402
OUT = REPO / "bindings/uniffi/swift/Sources/LibACP/Models.swift"

SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout", "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows", "static",
    "struct", "subscript", "typealias", "var", "break", "case", "continue", "default", "defer", "do",
    "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch", "where", "while",
    "as", "catch", "false", "is", "nil", "super", "self", "Self", "throw", "throws", "true", "try",
    "Type", "Protocol", "any", "some",
}
# Member names our own code uses in every struct.
RESERVED_MEMBERS = {"extra", "knownKeys"}


def camel(name, upper=False):
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    if not parts:
        return "value"
    out = parts[0] if not upper else parts[0][:1].upper() + parts[0][1:]
    if not upper:
        out = out[:1].lower() + out[1:]
    out += "".join(p[:1].upper() + p[1:] for p in parts[1:])
    if out[0].isdigit():
        out = "_" + out
    return out


def ident(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def swift_string(s):
    return json.dumps(s, ensure_ascii=False).replace("\\/", "/")


def doc(text, indent):
    if not text:
        return []
    lines = text.strip().splitlines()
    return [f"{indent}/// {line}".rstrip() for line in lines]


def is_any(p):
    """Whether a property's schema allows any value, `null` included (`{}`)."""
    return not set(p) - {"description", "title"}


# Schema names that would shadow a Swift standard type inside the module.
RENAMES = {"Error": "ErrorObject"}


def swift_type_name(name):
    return RENAMES.get(name, name)


class Generator:
    def __init__(self, schema):
        self.defs = schema["$defs"]
        self.out = []
        self.extra_structs = {}  # inline variant structs: name -> (schema, description)

    # -- classification ---------------------------------------------------

    def kind(self, name):
        d = self.defs[name]
        if alias_of(d):
            return "alias"
        if allows_anything(d):
            return "any"
        if "properties" in d and d.get("type") == "object" and not any(k in d for k in ("oneOf", "anyOf", "allOf")):
            return "object"
        alts = d.get("oneOf") or d.get("anyOf")
        if alts:
            if self.string_consts(alts) is not None:
                return "strenum"
            if self.tag_of(alts):
                return "tagged"
            if "x-method" in d and "properties" not in d and self.object_alternatives(alts):
                return "merged"
            return "json"
        if d.get("type") == "string":
            return "alias-string"
        if d.get("type") in ("integer", "number", "boolean"):
            return "alias-" + d["type"]
        if d.get("type") == "object" and "properties" in d:
            return "json"
        return "json"

    @staticmethod
    def string_consts(alts):
        """The constants of a union of string constants, with at most one
        catch-all `{"type": "string"}` (an open enum: values from a newer
        protocol are allowed); None for any other union."""
        consts = [a for a in alts if isinstance(a.get("const"), str)]
        rest = [a for a in alts if "const" not in a]
        if len(consts) + len(rest) != len(alts) or len(rest) > 1:
            return None
        if rest and (rest[0].get("type") != "string" or set(rest[0]) - {"type", "title", "description"}):
            return None
        return consts or None

    @staticmethod
    def object_alternatives(alts):
        """Whether a union's alternatives are all inline objects with their
        own properties (no tag, no reference): `{"result": ...}` or
        `{"error": ...}`."""
        return all(
            a.get("type") == "object" and a.get("properties") and not any(k in a for k in ("allOf", "$ref"))
            for a in alts
        )

    def tag_of(self, alts):
        """The member that tags every variant (a string constant), if any.
        A variant without it is allowed as the catch-all (`unrecognized`)."""
        tags = set()
        for a in alts:
            if a.get("type") != "object":
                return None
            consts = [k for k, p in a.get("properties", {}).items() if "const" in p]
            if not consts:
                if a.get("title") == "other" or "additionalProperties" in a:
                    continue
                return None
            tags.add(consts[0])
        return tags.pop() if len(tags) == 1 else None

    # -- types of properties ----------------------------------------------

    def type_of(self, p):
        """(swift type, nullable) for a property schema."""
        if "$ref" in p:
            return self.ref_type(p["$ref"]), False
        if "allOf" in p and len(p["allOf"]) == 1:
            return self.type_of(p["allOf"][0])
        for key in ("anyOf", "oneOf"):
            if key in p:
                alts = [a for a in p[key] if a.get("type") != "null"]
                nullable = len(alts) != len(p[key])
                if len(alts) == 1:
                    t, _ = self.type_of(alts[0])
                    return t, nullable
                return "JSONValue", nullable
        t = p.get("type")
        if isinstance(t, list):
            rest = [x for x in t if x != "null"]
            nullable = len(rest) != len(t)
            if len(rest) == 1:
                inner, _ = self.type_of({**p, "type": rest[0]})
                return inner, nullable
            return "JSONValue", nullable
        if t == "string":
            return "String", False
        if t == "integer":
            return "Int64", False
        if t == "number":
            return "Double", False
        if t == "boolean":
            return "Bool", False
        if t == "array":
            inner, nullable = self.type_of(p.get("items", {}))
            return f"[{inner}?]" if nullable else f"[{inner}]", False
        if t == "object" and isinstance(p.get("additionalProperties"), dict) and "properties" not in p:
            inner, _ = self.type_of(p["additionalProperties"])
            return f"[String: {inner}]", False
        return "JSONValue", False

    def ref_type(self, ref):
        return swift_type_name(ref.split("/")[-1])

    # -- emitters ---------------------------------------------------------

    def emit(self, line=""):
        self.out.append(line)

    def struct(self, name, d, description, exclude=()):
        props = {k: v for k, v in d.get("properties", {}).items() if k not in exclude}
        required = set(d.get("required", [])) - set(exclude)
        fields = []
        used = set(RESERVED_MEMBERS)
        for key, p in props.items():
            swift_name = "meta" if key == "_meta" else camel(key)
            while swift_name in used:
                swift_name += "_"
            used.add(swift_name)
            t, nullable = self.type_of(p)
            optional = nullable or key not in required
            # A member the schema lets a reader drop when it does not decode
            # (`x-deserialize-default-on-error`): nil then, and kept in `extra`.
            lenient = optional and bool(p.get("x-deserialize-default-on-error")) and t != "JSONValue"
            fields.append((key, swift_name, t, optional, p.get("description", ""), is_any(p), lenient))
        for line in doc(description, ""):
            self.emit(line)
        self.emit(f"public struct {name}: Codable, Hashable, Sendable {{")
        for key, sn, t, opt, desc, *_ in fields:
            for line in doc(desc, "    "):
                self.emit(line)
            self.emit(f"    public var {ident(sn)}: {t}{'?' if opt else ''}")
        self.emit("    /// Members the schema does not name, kept as they came (re-encoded as they are).")
        self.emit("    public var extra: [String: JSONValue]")
        self.emit("")
        args = ", ".join(f"{ident(sn)}: {t}{'? = nil' if opt else ''}" for _, sn, t, opt, *_ in fields)
        args = args + (", " if args else "") + "extra: [String: JSONValue] = [:]"
        self.emit(f"    public init({args}) {{")
        for _, sn, *_ in fields:
            self.emit(f"        self.{sn} = {ident(sn)}")
        self.emit("        self.extra = extra")
        self.emit("    }")
        self.emit("")
        known = ", ".join(swift_string(k) for k, *_ in fields)
        self.emit(f"    static let knownKeys: Set<String> = [{known}]")
        self.emit("")
        self.emit("    public init(from decoder: Decoder) throws {")
        self.emit("        let c = try decoder.container(keyedBy: AnyKey.self)")
        any_lenient = any(f[6] for f in fields)
        if any_lenient:
            self.emit("        var malformed: [String: JSONValue] = [:]")
        for key, sn, t, opt, _, anything, lenient in fields:
            if lenient:
                k = f"AnyKey({swift_string(key)})"
                self.emit("        do {")
                self.emit(f"            self.{sn} = try c.decodeIfPresent({t}.self, forKey: {k})")
                self.emit("        } catch {")
                self.emit(f"            self.{sn} = nil")
                self.emit(f"            malformed[{swift_string(key)}] = try c.decode(JSONValue.self, forKey: {k})")
                self.emit("        }")
            elif opt and anything:
                # Any value, null included: nil only when the member is absent.
                k = f"AnyKey({swift_string(key)})"
                # (`.none`, not `nil`: JSONValue is ExpressibleByNilLiteral.)
                self.emit(f"        self.{sn} = c.contains({k}) ? .some(try c.decode(JSONValue.self, forKey: {k})) : .none")
            elif opt:
                self.emit(f"        self.{sn} = try c.decodeIfPresent({t}.self, forKey: AnyKey({swift_string(key)}))")
            else:
                self.emit(f"        self.{sn} = try c.decode({t}.self, forKey: AnyKey({swift_string(key)}))")
        if any_lenient:
            self.emit("        self.extra = try AnyKey.extra(c, known: Self.knownKeys).merging(malformed) { kept, _ in kept }")
        else:
            self.emit("        self.extra = try AnyKey.extra(c, known: Self.knownKeys)")
        self.emit("    }")
        self.emit("")
        self.emit("    public func encode(to encoder: Encoder) throws {")
        self.emit("        var c = encoder.container(keyedBy: AnyKey.self)")
        self.emit("        try AnyKey.encodeExtra(extra, into: &c, known: Self.knownKeys)")
        for key, sn, t, opt, _, _, lenient in fields:
            verb = "encodeIfPresent" if opt else "encode"
            k = f"AnyKey({swift_string(key)})"
            if lenient:
                self.emit(f"        if self.{sn} == nil, let raw = extra[{swift_string(key)}] {{")
                self.emit(f"            try c.encode(raw, forKey: {k})")
                self.emit("        } else {")
                self.emit(f"            try c.{verb}(self.{sn}, forKey: {k})")
                self.emit("        }")
            else:
                self.emit(f"        try c.{verb}(self.{sn}, forKey: {k})")
        self.emit("    }")
        self.emit("}")
        self.emit("")

    def strenum(self, name, d):
        for line in doc(d.get("description", ""), ""):
            self.emit(line)
        self.emit(f"public enum {name}: Codable, Hashable, Sendable {{")
        cases = []
        for a in self.string_consts(d.get("oneOf") or d.get("anyOf")):
            c = camel(a["const"])
            cases.append((a["const"], c))
            for line in doc(a.get("description", ""), "    "):
                self.emit(line)
            self.emit(f"    case {ident(c)}")
        self.emit("    /// A value this version of the schema does not know (from a newer peer).")
        self.emit("    case unrecognized(String)")
        self.emit("")
        self.emit("    /// The value on the wire.")
        self.emit("    public var rawValue: String {")
        self.emit("        switch self {")
        for raw, c in cases:
            self.emit(f"        case .{ident(c)}: return {swift_string(raw)}")
        self.emit("        case .unrecognized(let value): return value")
        self.emit("        }")
        self.emit("    }")
        self.emit("")
        self.emit("    public init(rawValue: String) {")
        self.emit("        switch rawValue {")
        for raw, c in cases:
            self.emit(f"        case {swift_string(raw)}: self = .{ident(c)}")
        self.emit("        default: self = .unrecognized(rawValue)")
        self.emit("        }")
        self.emit("    }")
        self.emit("")
        self.emit("    public init(from decoder: Decoder) throws {")
        self.emit("        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))")
        self.emit("    }")
        self.emit("")
        self.emit("    public func encode(to encoder: Encoder) throws {")
        self.emit("        var c = encoder.singleValueContainer()")
        self.emit("        try c.encode(rawValue)")
        self.emit("    }")
        self.emit("}")
        self.emit("")

    def tagged(self, name, d):
        alts = d.get("oneOf") or d.get("anyOf")
        tag = self.tag_of(alts)
        cases = []
        for a in alts:
            consts = [k for k, p in a.get("properties", {}).items() if "const" in p]
            if not consts:
                continue  # the schema's own catch-all: our `unrecognized` case
            value = a["properties"][tag]["const"]
            case = camel(value)
            refs = [x["$ref"].split("/")[-1] for x in a.get("allOf", []) if "$ref" in x]
            own = {k: v for k, v in a.get("properties", {}).items() if k != tag}
            if refs and not own and len(refs) == 1:
                payload = swift_type_name(refs[0])
            elif not own and not refs:
                payload = None
            else:
                payload = name + camel(value, upper=True)
                merged = {"properties": {}, "required": []}
                for r in refs:
                    merged["properties"].update(self.defs[r].get("properties", {}))
                    merged["required"] += self.defs[r].get("required", [])
                merged["properties"].update(own)
                merged["required"] += [x for x in a.get("required", []) if x != tag]
                self.extra_structs[payload] = (merged, a.get("description", ""))
            cases.append((value, case, payload, a.get("description", "")))
        for line in doc(d.get("description", ""), ""):
            self.emit(line)
        self.emit(f"/// Tagged by `{tag}`.")
        self.emit(f"public enum {name}: Codable, Hashable, Sendable {{")
        for value, case, payload, desc in cases:
            for line in doc(desc, "    "):
                self.emit(line)
            self.emit(f"    case {ident(case)}{f'({payload})' if payload else ''}")
        self.emit(f"    /// A variant this version of the schema does not know, kept whole.")
        self.emit("    case unrecognized(JSONValue)")
        self.emit("")
        self.emit(f"    static let tagKey = AnyKey({swift_string(tag)})")
        self.emit("")
        self.emit("    public init(from decoder: Decoder) throws {")
        self.emit("        let c = try decoder.container(keyedBy: AnyKey.self)")
        self.emit("        switch try c.decodeIfPresent(String.self, forKey: Self.tagKey) {")
        for value, case, payload, _ in cases:
            if payload:
                self.emit(f"        case {swift_string(value)}:")
                if payload in self.defs and self.kind(payload) != "object":
                    # Not a struct (kept as JSON): the tag stays in it.
                    self.emit(f"            let payload = try {payload}(from: decoder)")
                else:
                    self.emit(f"            var payload = try {payload}(from: decoder)")
                    self.emit("            payload.extra.removeValue(forKey: Self.tagKey.stringValue)")
                self.emit(f"            self = .{ident(case)}(payload)")
            else:
                self.emit(f"        case {swift_string(value)}: self = .{ident(case)}")
        self.emit("        default: self = .unrecognized(try JSONValue(from: decoder))")
        self.emit("        }")
        self.emit("    }")
        self.emit("")
        self.emit("    public func encode(to encoder: Encoder) throws {")
        self.emit("        switch self {")
        for value, case, payload, _ in cases:
            if payload:
                self.emit(f"        case .{ident(case)}(let payload):")
                self.emit("            try payload.encode(to: encoder)")
            else:
                self.emit(f"        case .{ident(case)}:")
            self.emit("            var c = encoder.container(keyedBy: AnyKey.self)")
            self.emit(f"            try c.encode({swift_string(value)}, forKey: Self.tagKey)")
        self.emit("        case .unrecognized(let value):")
        self.emit("            try value.encode(to: encoder)")
        self.emit("        }")
        self.emit("    }")
        self.emit("}")
        self.emit("")

    def generate(self, source):
        self.emit("// Generated by scripts/swift/gen_models.py from " + source + ": do not edit.")
        self.emit("// The ACP v1 types as Codable values (see the script for the mapping).")
        self.emit("")
        self.emit("import Foundation")
        self.emit("")
        for schema_name in sorted(self.defs):
            d = self.defs[schema_name]
            k = self.kind(schema_name)
            name = swift_type_name(schema_name)
            if k == "object":
                self.struct(name, d, d.get("description", ""))
            elif k == "merged":
                alts = d.get("oneOf") or d.get("anyOf")
                merged = {"properties": {}}
                for a in alts:
                    merged["properties"].update(a["properties"])
                self.struct(name, merged, d.get("description", ""))
            elif k == "strenum":
                self.strenum(name, d)
            elif k == "tagged":
                self.tagged(name, d)
            elif k in ("alias", "any"):
                for line in doc(d.get("description", ""), ""):
                    self.emit(line)
                if k == "any":
                    self.emit("/// (Any JSON value.)")
                target = swift_type_name(alias_of(d)) if k == "alias" else "JSONValue"
                self.emit(f"public typealias {name} = {target}")
                self.emit("")
            elif k.startswith("alias-"):
                t = {"string": "String", "integer": "Int64", "number": "Double", "boolean": "Bool"}[k[6:]]
                for line in doc(d.get("description", ""), ""):
                    self.emit(line)
                self.emit(f"public typealias {name} = {t}")
                self.emit("")
            else:
                for line in doc(d.get("description", ""), ""):
                    self.emit(line)
                self.emit("/// (Not modelled: its shape is an untagged union; kept as JSON.)")
                self.emit(f"public typealias {name} = JSONValue")
                self.emit("")
        for name in sorted(self.extra_structs):
            d, desc = self.extra_structs[name]
            self.struct(name, d, desc)
        return "\n".join(self.out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed file is out of date")
    ap.add_argument("--schema", default=str(REPO / "spec/ts-sdk-2.4.0/v1/schema.unstable.json"))
    args = ap.parse_args()
    schema_path = Path(args.schema)
    schema = json.loads(schema_path.read_text())
    try:
        source = str(schema_path.resolve().relative_to(REPO))
    except ValueError:
        source = schema_path.name
    text = Generator(schema).generate(source)
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(REPO)} is out of date: run scripts/swift/gen_models.py", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(REPO)} is up to date")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
