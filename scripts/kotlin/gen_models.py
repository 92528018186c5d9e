#!/usr/bin/env python3
"""Generates the Kotlin models of the ACP v1 types the official Kotlin SDK lacks.

    scripts/kotlin/gen_models.py [--check]

The Kotlin binding types ACP with the official Kotlin SDK's models
(`com.agentclientprotocol:acp-model-jvm` 0.10.5), which have no type for the
unstable v1 extensions. This script reads the schema the project builds from
(`spec/ts-sdk-2.4.0/v1/schema.unstable.json`, the stable schema plus the
unstable extensions; the stable one, `schema.json`, says which methods are
stable) and writes `bindings/uniffi/kotlin/src/main/kotlin/dev/libacp/models/Models.kt`
(package `dev.libacp.models`), which is committed; `--check` fails when the
committed file differs from what the schema gives (scripts/test-kotlin.sh
runs it).

What it generates: the params and results of every unstable method the
agent or the client handles, or a proxy chain's conductor and proxies (the
schema's `x-method`/`x-side` `proxy`), and every definition they reach,
except those the SDK models under the same name (`SDK` below: those are used
from the SDK, so values pass between both APIs as they are). The mapping,
for kotlinx.serialization with the SDK's `ACPJson`:

* an object becomes a `@Serializable data class` with a `val` per property,
  in the schema's order; a member that is not required, or may be `null`, is
  nullable with the default `null` (`ACPJson` omits it when `null`);
* a union of string constants (with or without a catch-all string) becomes a
  `@JvmInline value class` over the string with a constant per value, so a
  value from a newer peer decodes too;
* a string type alias (ids) becomes a `@JvmInline value class` over the string;
* a definition that is another one under a new name (`allOf` of one `$ref`
  and nothing else: `InitializeProxyRequest` is `InitializeRequest`) becomes
  a `typealias` of it;
* a definition that allows any value (`{}`: the result of `proxy/successor`)
  is a `typealias` of `JsonElement` (`JsonNull` for `null`);
* a union tagged by a constant member (`type`) becomes a `sealed interface`
  with a `data class` per variant (the union's own members and the variant's)
  and `Unknown(json)` for tags this schema does not know (kept whole); its
  serializer picks the variant by the tag and writes the tag back;
* a method's params or result that is a union of inline objects without a
  tag (`{"result": ...}` or `{"error": ...}`) becomes one `data class` whose
  members are all nullable;
* a member that may hold any value (`{}`) is `JsonElement?`: `null` when it
  is absent, `JsonNull` when it is `null` (the two stay distinct both ways);
* anything else (an untagged union of arrays, say) is `JsonElement`.
"""

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts/lib"))
from schema_shapes import alias_of, allows_anything  # noqa: E402
SCHEMA = REPO / "spec/ts-sdk-2.4.0/v1/schema.unstable.json"
STABLE = REPO / "spec/ts-sdk-2.4.0/v1/schema.json"
OUT = REPO / "bindings/uniffi/kotlin/src/main/kotlin/dev/libacp/models/Models.kt"
PACKAGE = "dev.libacp.models"

# Definitions the SDK's models (com.agentclientprotocol.model, acp-model-jvm
# 0.10.5) have under the same name and wire shape: referenced, not generated.
SDK = {
    "ContentBlock",
    "InitializeRequest",
    "InitializeResponse",
    "McpServer",
    "SessionId",
    "SessionModeState",
}

KOTLIN_KEYWORDS = {
    "as",
    "break",
    "class",
    "continue",
    "do",
    "else",
    "false",
    "for",
    "fun",
    "if",
    "in",
    "interface",
    "is",
    "null",
    "object",
    "package",
    "return",
    "super",
    "this",
    "throw",
    "true",
    "try",
    "typealias",
    "typeof",
    "val",
    "var",
    "when",
    "while",
}
PRIMITIVES = {"String", "Int", "Long", "Double", "Boolean", "List", "Map"}


def camel(name, upper=False):
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    if not parts:
        return "Value" if upper else "value"
    first = parts[0][:1].upper() + parts[0][1:] if upper else parts[0][:1].lower() + parts[0][1:]
    out = first + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return "_" + out if out[0].isdigit() else out


def constant(value):
    out = (
        re.sub(r"[^0-9A-Za-z]+", "_", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", value))
        .strip("_")
        .upper()
    )
    return "_" + out if not out or out[0].isdigit() else out


def ident(name):
    return f"`{name}`" if name in KOTLIN_KEYWORDS else name


def kstring(s):
    return json.dumps(s, ensure_ascii=False).replace("$", "\\$")


def kdoc(text, indent):
    if not text or not text.strip():
        return []
    # Kotlin nests block comments: neither `/*` nor `*/` may appear inside.
    text = text.strip().replace("/*", "/ *").replace("*/", "* /")
    lines = text.splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**"] + [f"{indent} * {line}".rstrip() for line in lines] + [f"{indent} */"]


def is_any(p):
    """Whether a property's schema allows any value, `null` included (`{}`)."""
    return not set(p) - {"description", "title"}


def refs_in(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "$ref":
                out.add(v.split("/")[-1])
            else:
                refs_in(v, out)
    elif isinstance(value, list):
        for v in value:
            refs_in(v, out)
    return out


class Generator:
    def __init__(self, schema, stable):
        self.defs = schema["$defs"]
        stable_methods = {d["x-method"] for d in stable["$defs"].values() if "x-method" in d}
        self.roots = sorted(
            name
            for name, d in self.defs.items()
            if "x-method" in d
            and d.get("x-side") in ("agent", "client", "proxy")
            and d["x-method"] not in stable_methods
        )
        self.out = []
        self.sdk_used = set()

    # -- what to generate --------------------------------------------------

    def reachable(self):
        seen, todo = set(), list(self.roots)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in SDK:
                continue
            todo.extend(sorted(refs_in(self.defs[name], set())))
        return sorted(seen)

    # -- classification ----------------------------------------------------

    @staticmethod
    def string_consts(alts):
        """The constant alternatives of a union of string constants (at most
        one catch-all `{"type": "string"}`); None for any other union."""
        consts = [a for a in alts if isinstance(a.get("const"), str)]
        rest = [a for a in alts if "const" not in a]
        if len(consts) + len(rest) != len(alts) or len(rest) > 1:
            return None
        if rest and (
            rest[0].get("type") != "string" or set(rest[0]) - {"type", "title", "description"}
        ):
            return None
        return consts or None

    def tag_of(self, alts):
        """The member every variant fixes to a string constant, if any."""
        tags = set()
        for a in alts:
            consts = [
                k for k, p in a.get("properties", {}).items() if isinstance(p.get("const"), str)
            ]
            if a.get("type") != "object" or len(consts) != 1:
                return None
            tags.add(consts[0])
        return tags.pop() if len(tags) == 1 else None

    def kind(self, name):
        d = self.defs[name]
        if alias_of(d):
            return "alias"
        if allows_anything(d):
            return "any"
        alts = d.get("oneOf") or d.get("anyOf")
        if alts:
            if self.string_consts(alts) is not None:
                return "strenum"
            if self.tag_of(alts):
                return "tagged"
            if (
                "x-method" in d
                and "properties" not in d
                and all(
                    a.get("type") == "object" and a.get("properties") and "allOf" not in a
                    for a in alts
                )
            ):
                return "merged"
            return "json"
        if d.get("type") == "object":
            return "object"
        if d.get("type") == "string":
            return "alias-string"
        return "json"

    # -- types -------------------------------------------------------------

    def ref_type(self, name):
        if name in SDK:
            self.sdk_used.add(name)
        return name

    def type_of(self, p):
        """(Kotlin type, nullable) of a property schema."""
        if "$ref" in p:
            return self.ref_type(p["$ref"].split("/")[-1]), False
        if "allOf" in p and len(p["allOf"]) == 1:
            return self.type_of(p["allOf"][0])
        for key in ("anyOf", "oneOf"):
            if key in p:
                alts = [a for a in p[key] if a.get("type") != "null"]
                nullable = len(alts) != len(p[key])
                if len(alts) == 1:
                    return self.type_of(alts[0])[0], nullable
                return "JsonElement", nullable
        t = p.get("type")
        if isinstance(t, list):
            rest = [x for x in t if x != "null"]
            nullable = len(rest) != len(t)
            if len(rest) == 1:
                return self.type_of({**p, "type": rest[0]})[0], nullable
            return "JsonElement", nullable
        if t == "string":
            return "String", False
        if t == "integer":
            return ("Int" if p.get("format") == "int32" else "Long"), False
        if t == "number":
            return "Double", False
        if t == "boolean":
            return "Boolean", False
        if t == "array":
            inner, nullable = self.type_of(p.get("items", {}))
            return f"List<{inner}{'?' if nullable else ''}>", False
        if (
            t == "object"
            and isinstance(p.get("additionalProperties"), dict)
            and "properties" not in p
        ):
            inner, _ = self.type_of(p["additionalProperties"])
            return f"Map<String, {inner}>", False
        return "JsonElement", False

    # -- emitters ----------------------------------------------------------

    def emit(self, line=""):
        self.out.append(line)

    def fields(self, props, required, shadowed=()):
        """The constructor parameters of a data class."""
        lines = []
        for key, p in props.items():
            t, nullable = self.type_of(p)
            if t in shadowed:
                t = "kotlin." + t
            name = key if key == "_meta" else camel(key)
            serial = "" if name == key else f"@SerialName({kstring(key)}) "
            if is_any(p):
                lines.append(
                    (
                        p,
                        f"{serial}@Serializable(with = AnyJson::class) val {ident(name)}: JsonElement? = null",
                    )
                )
            elif nullable or key not in required:
                lines.append((p, f"{serial}val {ident(name)}: {t}? = null"))
            else:
                lines.append((p, f"{serial}val {ident(name)}: {t}"))
        return lines

    def data_class(self, name, props, required, description, indent="", implements="", shadowed=()):
        for line in kdoc(description, indent):
            self.emit(line)
        self.emit(f"{indent}@Serializable")
        params = self.fields(props, required, shadowed)
        if not params:
            self.emit(f"{indent}class {name}{implements} {{")
            self.emit(f"{indent}    override fun equals(other: Any?): Boolean = other is {name}")
            self.emit(f"{indent}    override fun hashCode(): Int = {kstring(name)}.hashCode()")
            self.emit(f"{indent}    override fun toString(): String = {kstring(name + '()')}")
            self.emit(f"{indent}}}")
            self.emit("")
            return
        self.emit(f"{indent}data class {name}(")
        for p, line in params:
            for doc_line in kdoc(p.get("description", ""), indent + "    "):
                self.emit(doc_line)
            self.emit(f"{indent}    {line},")
        self.emit(f"{indent}){implements}")
        self.emit("")

    def value_class(self, name, d, consts=()):
        """A string enum (a constant per value) or a string alias (none)."""
        for line in kdoc(d.get("description", ""), ""):
            self.emit(line)
        self.emit("@Serializable")
        self.emit("@JvmInline")
        self.emit(f"value class {name}(val value: String) {{")
        self.emit("    override fun toString(): String = value")
        if consts:
            self.emit("")
            self.emit("    companion object {")
            for a in consts:
                for line in kdoc(a.get("description", ""), "        "):
                    self.emit(line)
                self.emit(f"        val {constant(a['const'])} = {name}({kstring(a['const'])})")
            self.emit("    }")
        self.emit("}")
        self.emit("")

    def tagged(self, name, d):
        alts = d.get("oneOf") or d.get("anyOf")
        tag = self.tag_of(alts)
        base = {k: v for k, v in d.get("properties", {}).items() if k != tag}
        base_required = [k for k in d.get("required", []) if k != tag]
        variants = []
        for a in alts:
            value = a["properties"][tag]["const"]
            props, required = dict(base), list(base_required)
            for r in (x["$ref"].split("/")[-1] for x in a.get("allOf", []) if "$ref" in x):
                props.update(self.defs[r].get("properties", {}))
                required += self.defs[r].get("required", [])
            props.update({k: v for k, v in a.get("properties", {}).items() if k != tag})
            required += [k for k in a.get("required", []) if k != tag]
            variants.append(
                (value, camel(value, upper=True), props, required, a.get("description", ""))
            )
        shadowed = {v[1] for v in variants} | {"Unknown"}
        for line in kdoc(d.get("description", ""), ""):
            self.emit(line)
        self.emit(f"@Serializable(with = {name}Serializer::class)")
        self.emit(f"sealed interface {name} {{")
        for value, cls, props, required, desc in variants:
            self.data_class(
                cls,
                props,
                required,
                f"`{tag}: {value}`. {desc}".strip(),
                "    ",
                f" : {name}",
                shadowed,
            )
        self.emit("    /** A variant this version of the schema does not know, kept whole. */")
        self.emit(f"    data class Unknown(val json: JsonObject) : {name}")
        self.emit("}")
        self.emit("")
        self.emit(f"/** Picks the variant of [{name}] by its `{tag}` and writes it back. */")
        self.emit(f"internal object {name}Serializer : KSerializer<{name}> {{")
        self.emit(
            f"    override val descriptor: SerialDescriptor = buildClassSerialDescriptor({kstring(PACKAGE + '.' + name)})"
        )
        self.emit("")
        self.emit(f"    override fun deserialize(decoder: Decoder): {name} {{")
        self.emit("        val json = decoder as JsonDecoder")
        self.emit("        val obj = json.decodeJsonElement().jsonObject")
        self.emit(
            f"        return when ((obj[{kstring(tag)}] as? JsonPrimitive)?.contentOrNull) {{"
        )
        for value, cls, *_ in variants:
            self.emit(
                f"            {kstring(value)} -> json.json.decodeFromJsonElement({name}.{cls}.serializer(), obj)"
            )
        self.emit(f"            else -> {name}.Unknown(obj)")
        self.emit("        }")
        self.emit("    }")
        self.emit("")
        self.emit(f"    override fun serialize(encoder: Encoder, value: {name}) {{")
        self.emit("        val json = encoder as JsonEncoder")
        self.emit("        val element = when (value) {")
        for value, cls, *_ in variants:
            self.emit(f"            is {name}.{cls} ->")
            self.emit(
                f"                withTag({kstring(tag)}, {kstring(value)}, json.json.encodeToJsonElement({name}.{cls}.serializer(), value))"
            )
        self.emit(f"            is {name}.Unknown -> value.json")
        self.emit("        }")
        self.emit("        json.encodeJsonElement(element)")
        self.emit("    }")
        self.emit("}")
        self.emit("")

    def support(self):
        self.emit("/** The object with [tag] set to [value] (first), then [body]'s members. */")
        self.emit(
            "private fun withTag(tag: String, value: String, body: JsonElement): JsonObject ="
        )
        self.emit(
            "    JsonObject(mapOf(tag to JsonPrimitive(value)) + body.jsonObject.filterKeys { it != tag })"
        )
        self.emit("")
        self.emit("/**")
        self.emit(" * A member that may hold any JSON value: `null` (Kotlin) when absent,")
        self.emit(" * [JsonNull] when it is `null` on the wire.")
        self.emit(" */")
        self.emit("internal object AnyJson : KSerializer<JsonElement?> {")
        self.emit(
            "    override val descriptor: SerialDescriptor = JsonElement.serializer().nullable.descriptor"
        )
        self.emit("")
        self.emit(
            "    override fun deserialize(decoder: Decoder): JsonElement = (decoder as JsonDecoder).decodeJsonElement()"
        )
        self.emit("")
        self.emit("    override fun serialize(encoder: Encoder, value: JsonElement?) {")
        self.emit("        (encoder as JsonEncoder).encodeJsonElement(value ?: JsonNull)")
        self.emit("    }")
        self.emit("}")

    def generate(self):
        body_start = len(self.out)
        for name in self.reachable():
            if name in SDK:
                continue
            d = self.defs[name]
            k = self.kind(name)
            if k == "object":
                self.data_class(
                    name, d.get("properties", {}), d.get("required", []), d.get("description", "")
                )
            elif k == "merged":
                props = {}
                for a in d.get("oneOf") or d.get("anyOf"):
                    props.update(a["properties"])
                self.data_class(name, props, [], d.get("description", ""))
            elif k == "strenum":
                self.value_class(name, d, self.string_consts(d.get("oneOf") or d.get("anyOf")))
            elif k == "tagged":
                self.tagged(name, d)
            elif k == "alias-string":
                self.value_class(name, d)
            elif k in ("alias", "any"):
                target = self.ref_type(alias_of(d)) if k == "alias" else "JsonElement"
                for line in kdoc(d.get("description", ""), ""):
                    self.emit(line)
                self.emit(f"typealias {name} = {target}")
                self.emit("")
            else:
                note = "(Not modelled: an untagged union; kept as JSON.)"
                for line in kdoc(f"{d.get('description', '')}\n\n{note}".strip(), ""):
                    self.emit(line)
                self.emit(f"typealias {name} = JsonElement")
                self.emit("")
        self.support()
        body = self.out[body_start:]
        head = [
            f"// Generated by scripts/kotlin/gen_models.py from {SCHEMA.relative_to(REPO)}: do not edit.",
            "// The ACP v1 types the official Kotlin SDK's models lack (the unstable",
            "// methods' params and results, and what they reach), for kotlinx.serialization",
            "// with the SDK's `ACPJson` (see the script for the mapping).",
            "@file:OptIn(ExperimentalSerializationApi::class)",
            "",
            f"package {PACKAGE}",
            "",
        ]
        imports = [f"com.agentclientprotocol.model.{n}" for n in sorted(self.sdk_used)] + [
            "kotlinx.serialization.ExperimentalSerializationApi",
            "kotlinx.serialization.KSerializer",
            "kotlinx.serialization.SerialName",
            "kotlinx.serialization.Serializable",
            "kotlinx.serialization.builtins.nullable",
            "kotlinx.serialization.descriptors.SerialDescriptor",
            "kotlinx.serialization.descriptors.buildClassSerialDescriptor",
            "kotlinx.serialization.encoding.Decoder",
            "kotlinx.serialization.encoding.Encoder",
            "kotlinx.serialization.json.JsonDecoder",
            "kotlinx.serialization.json.JsonElement",
            "kotlinx.serialization.json.JsonEncoder",
            "kotlinx.serialization.json.JsonNull",
            "kotlinx.serialization.json.JsonObject",
            "kotlinx.serialization.json.JsonPrimitive",
            "kotlinx.serialization.json.contentOrNull",
            "kotlinx.serialization.json.jsonObject",
        ]
        head += [f"import {i}" for i in imports] + [""]
        return "\n".join(head + body).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check", action="store_true", help="fail if the committed file is out of date"
    )
    args = ap.parse_args()
    text = Generator(json.loads(SCHEMA.read_text()), json.loads(STABLE.read_text())).generate()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(
                f"{OUT.relative_to(REPO)} is out of date: run scripts/kotlin/gen_models.py",
                file=sys.stderr,
            )
            return 1
        print(f"{OUT.relative_to(REPO)} is up to date")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
