"""Shapes of ACP schema definitions that more than one model generator maps
(scripts/kotlin/gen_models.py, scripts/swift/gen_models.py)."""

# Members that say nothing of a definition's shape.
ANNOTATIONS = {"description", "title", "x-method", "x-side"}


def alias_of(d):
    """The definition `d` is another under a new name (`allOf` of one `$ref`
    and nothing else: `InitializeProxyRequest` is `InitializeRequest`): that
    one's name, else None."""
    allof = d.get("allOf", [])
    if set(d) - ANNOTATIONS - {"allOf"} or len(allof) != 1 or set(allof[0]) != {"$ref"}:
        return None
    return allof[0]["$ref"].split("/")[-1]


def allows_anything(d):
    """Whether the definition `d` allows any JSON value (`null` included):
    the result of `proxy/successor`, an extension's params."""
    return not set(d) - ANNOTATIONS
