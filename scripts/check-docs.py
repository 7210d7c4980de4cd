#!/usr/bin/env python3
"""Fails when a public symbol of a library product has no /// comment.

Reads the symbol graphs `swift package dump-symbol-graph --minimum-access-level public` wrote
(argument: their directory) for the modules the package ships as libraries. Symbols the
compiler made (hashValue, literal initializers from a protocol's default) have no source
location and are not counted; neither are implementations that inherit a protocol's docs.
"""
import glob, json, os, sys

MODULES = ["AppHost", "AppHostSupport", "AppHostSystemd", "AppHostServices", "AppHostDaemon", "AppHostTestKit"]


def main(directory):
    undocumented = []
    counted = 0
    for module in MODULES:
        files = [os.path.join(directory, f"{module}.symbols.json")] + glob.glob(os.path.join(directory, f"{module}@*.symbols.json"))
        if not os.path.exists(files[0]):
            print(f"check-docs: no symbol graph for {module} in {directory}", file=sys.stderr)
            return 2
        for path in files:
            with open(path) as handle:
                graph = json.load(handle)
            for symbol in graph["symbols"]:
                location = symbol.get("location")
                if not location or "sourceOrigin" in symbol:
                    continue
                counted += 1
                if not symbol.get("docComment"):
                    file = location["uri"].removeprefix("file://")
                    line = location["position"]["line"] + 1
                    name = ".".join(symbol["pathComponents"])
                    undocumented.append(f"{os.path.relpath(file)}:{line}: {module}.{name} has no /// comment")
    if undocumented:
        print("\n".join(sorted(undocumented)), file=sys.stderr)
        print(f"check-docs: {len(undocumented)} of {counted} public symbols are undocumented", file=sys.stderr)
        return 1
    print(f"check-docs: all {counted} public symbols of {', '.join(MODULES)} are documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".build/symbolgraph"))
