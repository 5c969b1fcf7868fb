"""The typed results of the corpus: tools' structured results (MCP's `structuredContent`) with
their output schemas, in the shapes the field sends — arrays of records with an error-bearing
record in the middle. Recorded by this generator (deterministic: no clock, no randomness), in
the shapes of GitHub's check-runs API, `kubectl get pods -o json`, the Python SDK's list return
(a pytest report), the official memory server's graph, a service's structured log records, and
`npm audit --json`'s vulnerabilities by package.

For each `<name>`: `<name>.json` the structure, `<name>.schema.json` its output schema,
`<name>.must` the records a developer must see (the first, the last, the failing), one compact
JSON a line, each an item of one of its lists or a member's value of one of its maps.

    python3 tests/corpus/typed/generate.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, value, schema, must):
    with open(os.path.join(HERE, f"{name}.json"), "w") as f:
        json.dump(value, f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(HERE, f"{name}.schema.json"), "w") as f:
        json.dump(schema, f, indent=2)
        f.write("\n")
    with open(os.path.join(HERE, f"{name}.must"), "w") as f:
        for record in must:
            f.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")


def check_runs():
    runs = []
    for i in range(300):
        conclusion = {137: "failure", 211: "timed_out"}.get(i, "success")
        runs.append({
            "id": 21000000 + i,
            "name": f"ci / test ({['ubuntu', 'macos', 'windows'][i % 3]}, shard {i % 8})",
            "status": "completed",
            "conclusion": conclusion,
            "started_at": f"2026-11-20T10:{i // 60 % 60:02}:{i % 60:02}Z",
            "html_url": f"https://github.example/acme/app/actions/runs/9000/job/{21000000 + i}",
            "output": {
                "title": "1 test failed" if conclusion != "success" else "all tests passed",
                "summary": f"shard {i % 8}: {120 + i % 17} tests",
            },
        })
    run = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"},
            "status": {"enum": ["queued", "in_progress", "completed"]},
            "conclusion": {"anyOf": [{"enum": ["success", "failure", "timed_out", "cancelled"]}, {"type": "null"}]},
            "started_at": {"type": "string", "format": "date-time"},
            "html_url": {"type": "string", "format": "uri"},
            "output": {"$ref": "#/$defs/Output"},
        },
        "required": ["id", "name", "status", "conclusion", "started_at", "html_url", "output"],
        "additionalProperties": False,
    }
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"total_count": {"type": "integer"}, "check_runs": {"type": "array", "items": run}},
        "required": ["total_count", "check_runs"],
        "$defs": {"Output": {"type": "object", "properties": {"title": {"type": "string"}, "summary": {"type": "string"}},
                             "required": ["title", "summary"]}},
    }
    write("github-check-runs", {"total_count": len(runs), "check_runs": runs}, schema,
          [runs[0], runs[137], runs[211], runs[-1]])


def pods():
    items = []
    for i in range(200):
        phase = "Failed" if i == 87 else "Running"
        state = {"running": {"startedAt": "2026-11-20T09:00:00Z"}}
        restarts = 0
        if i == 150:
            state = {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}
            restarts = 14
        items.append({
            "metadata": {"name": f"api-{i:03}-7f9c", "namespace": "prod", "uid": f"0000-{i:04}",
                         "labels": {"app": "api", "tier": "backend"}},
            "status": {"phase": phase, "podIP": f"10.1.{i // 250}.{i % 250}",
                       "containerStatuses": [{"name": "api", "ready": phase == "Running" and i != 150,
                                              "restartCount": restarts, "state": state}]},
        })
    container = {"type": "object", "properties": {
        "name": {"type": "string"}, "ready": {"type": "boolean"}, "restartCount": {"type": "integer"},
        "state": {"type": "object"}}, "required": ["name", "ready", "restartCount", "state"]}
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"const": "v1"}, "kind": {"const": "List"},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "metadata": {"type": "object", "properties": {
                    "name": {"type": "string"}, "namespace": {"type": "string"}, "uid": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
                    "required": ["name", "namespace", "uid"]},
                "status": {"type": "object", "properties": {
                    "phase": {"enum": ["Pending", "Running", "Succeeded", "Failed", "Unknown"]},
                    "podIP": {"type": "string"},
                    "containerStatuses": {"type": "array", "items": container}},
                    "required": ["phase"]}},
                "required": ["metadata", "status"]}},
        },
        "required": ["apiVersion", "kind", "items"],
    }
    write("kubectl-pods", {"apiVersion": "v1", "kind": "List", "items": items}, schema,
          [items[0], items[87], items[150], items[-1]])


def pytest_report():
    tests = []
    for i in range(1500):
        failed = i in (612, 1033)
        tests.append({
            "nodeid": f"tests/test_orders.py::test_case_{i}",
            "outcome": "failed" if failed else "passed",
            "duration": round(0.001 * (i % 97), 3),
            "longrepr": (f"AssertionError: assert {i} == {i + 1}\n  where {i} = total(order)") if failed else None,
        })
    schema = {
        "$defs": {"Test": {"properties": {
            "nodeid": {"title": "Nodeid", "type": "string"},
            "outcome": {"title": "Outcome", "type": "string"},
            "duration": {"title": "Duration", "type": "number"},
            "longrepr": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Longrepr"}},
            "required": ["nodeid", "outcome", "duration"], "title": "Test", "type": "object"}},
        "properties": {"result": {"items": {"$ref": "#/$defs/Test"}, "title": "Result", "type": "array"}},
        "required": ["result"], "title": "run_testsOutput", "type": "object",
    }
    write("pytest-report", {"result": tests}, schema, [tests[0], tests[612], tests[1033], tests[-1]])


def memory_graph():
    entities = [{"name": f"entity {i}", "entityType": "service" if i % 5 else "team",
                 "observations": [f"owns the {i % 7} pipeline", f"on call in week {i % 52}"]} for i in range(400)]
    relations = [{"from": f"entity {i - 1}", "to": f"entity {i}", "relationType": "depends on"} for i in range(1, 400)]
    entity = {"type": "object", "properties": {"name": {"type": "string"}, "entityType": {"type": "string"},
              "observations": {"type": "array", "items": {"type": "string"}}},
              "required": ["name", "entityType", "observations"], "additionalProperties": False}
    relation = {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"},
                "relationType": {"type": "string"}}, "required": ["from", "to", "relationType"],
                "additionalProperties": False}
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"entities": {"type": "array", "items": entity},
                             "relations": {"type": "array", "items": relation}},
              "required": ["entities", "relations"], "additionalProperties": False}
    write("memory-graph", {"entities": entities, "relations": relations}, schema,
          [entities[0], entities[-1], relations[0], relations[-1]])


def log_records():
    records = []
    for i in range(1000):
        level = {400: "error", 700: "fatal"}.get(i, "warn" if i % 97 == 0 else "info")
        msg = {400: "payment provider refused the charge: card_declined",
               700: "out of memory allocating 2147483648 bytes; shutting down"}.get(i, f"handled request {i}")
        records.append({"ts": f"2026-11-20T10:{i // 60 % 60:02}:{i % 60:02}.{i % 1000:03}Z",
                        "level": level, "service": "checkout", "msg": msg, "request_id": f"req-{i:05}"})
    schema = {"type": "object", "properties": {"records": {"type": "array", "items": {
        "type": "object", "properties": {"ts": {"type": "string"}, "level": {"enum": ["debug", "info", "warn", "error", "fatal"]},
                                         "service": {"type": "string"}, "msg": {"type": "string"},
                                         "request_id": {"type": "string", "pattern": "^req-[0-9]+$"}},
        "required": ["ts", "level", "service", "msg", "request_id"]}}, "next_cursor": {"type": ["string", "null"]}},
        "required": ["records"]}
    write("log-records", {"records": records, "next_cursor": "c-1000"}, schema,
          [records[0], records[400], records[700], records[-1]])


def npm_audit():
    vulnerabilities = {}
    for i in range(250):
        name = f"pkg-{i:03}"
        severity = {90: "critical", 180: "high"}.get(i, "low")
        vulnerabilities[name] = {"name": name, "severity": severity, "isDirect": i % 4 == 0,
                                 "via": [f"GHSA-{i:04}-xxxx-yyyy"], "range": f"<{i % 9}.{i % 5}.0",
                                 "fixAvailable": i % 3 != 0}
    schema = {"type": "object", "properties": {
        "auditReportVersion": {"const": 2},
        "vulnerabilities": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "name": {"type": "string"}, "severity": {"enum": ["info", "low", "moderate", "high", "critical"]},
            "isDirect": {"type": "boolean"}, "via": {"type": "array", "items": {"type": "string"}},
            "range": {"type": "string"}, "fixAvailable": {"type": "boolean"}},
            "required": ["name", "severity", "isDirect", "via", "range", "fixAvailable"]}}},
        "required": ["auditReportVersion", "vulnerabilities"]}
    names = sorted(vulnerabilities)
    write("npm-audit", {"auditReportVersion": 2, "vulnerabilities": vulnerabilities}, schema,
          [vulnerabilities[names[0]], vulnerabilities["pkg-090"], vulnerabilities[names[-1]]])


if __name__ == "__main__":
    check_runs()
    pods()
    pytest_report()
    memory_graph()
    log_records()
    npm_audit()
