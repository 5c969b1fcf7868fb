#!/usr/bin/env python3
"""The public surface of a crate, one line an item, from rustdoc's JSON.

Usage: public-api.py CRATE.json

Prints every public path a user can write (modules, types, functions, constants, macros, the
re-exports that give an item a second path), each type's variants, public fields and methods,
and the traits it implements (auto and blanket impls left out), sorted. Then checks that no item
of the crate is reachable under two paths other than a crate-root re-export (the root holds the
common path on purpose; everything else has one home), and exits 1 naming each one that is.
"""

import json
import sys
from collections import defaultdict


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    lines = set()
    homes = defaultdict(set)  # item id -> the paths it is reachable under
    seen_modules = set()

    def kind_of(item):
        return next(iter(item["inner"]))

    def members(item, at):
        inner = item["inner"]
        kind = kind_of(item)
        body = inner[kind]
        if kind == "struct":
            plain = body["kind"].get("plain") if isinstance(body["kind"], dict) else None
            for field in (plain or {}).get("fields", []):
                field = index.get(str(field))
                if field and field["visibility"] == "public":
                    lines.add(f"field {at}.{field['name']}")
        if kind == "enum":
            for variant in body["variants"]:
                variant = index.get(str(variant))
                if variant:
                    lines.add(f"variant {at}::{variant['name']}")
        if kind == "trait":
            for member in body["items"]:
                member = index.get(str(member))
                if member:
                    lines.add(f"trait-item {at}::{member['name']}")
        for impl_id in body.get("impls", []):
            impl = index.get(str(impl_id))
            if not impl:
                continue
            imp = impl["inner"]["impl"]
            if imp["is_synthetic"] or imp.get("blanket_impl"):
                continue
            if imp["trait"] is None:
                for member in imp["items"]:
                    member = index.get(str(member))
                    if member and member["visibility"] == "public":
                        lines.add(f"{kind_of(member)} {at}::{member['name']}")
            else:
                lines.add(f"impl {imp['trait']['path']} for {at}")

    def walk(module_id, at):
        if module_id in seen_modules:
            return
        seen_modules.add(module_id)
        module = index[str(module_id)]
        for item_id in module["inner"]["module"]["items"]:
            item = index.get(str(item_id))
            if item is None:
                continue
            kind = kind_of(item)
            if kind == "use":
                use = item["inner"]["use"]
                target = index.get(str(use["id"])) if use["id"] is not None else None
                if use["is_glob"]:
                    if target and kind_of(target) == "module":
                        walk(target["id"], at)
                    continue
                name = use["name"]
                if target is None or target["crate_id"] != 0:
                    lines.add(f"use {at}::{name} = {use['source']}")
                    continue
                place(target, f"{at}::{name}")
            else:
                place(item, f"{at}::{item['name']}")

    def place(item, at):
        kind = kind_of(item)
        homes[item["id"]].add(at)
        lines.add(f"{kind} {at}")
        if kind == "module":
            walk(item["id"], at)
        elif kind in ("struct", "enum", "trait", "union"):
            members(item, at)

    root = index[str(doc["root"])]
    walk(doc["root"], root["name"])
    for line in sorted(lines):
        print(line)

    crate = root["name"]
    twice = []
    for item_id, paths in homes.items():
        deeper = sorted(p for p in paths if p.count("::") > 1)
        if len(deeper) > 1:
            twice.append(", ".join(deeper))
    if twice:
        print(
            f"items of `{crate}` under more than one path (keep one home; the root may add a "
            "second for the common path):",
            file=sys.stderr,
        )
        for paths in sorted(twice):
            print(f"  {paths}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
