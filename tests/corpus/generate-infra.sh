#!/usr/bin/env bash
# The corpus wider still: the outputs of the infrastructure and CI tools an agent runs beside
# the compilers and test runners of generate.sh and generate-field.sh.
#
# terraform's apply is the real tool's (terraform 1.x with its built-in terraform_data resource:
# no provider to download). The others cannot run here (no cluster, no Docker daemon, no
# systemd, no CI runner, no Gradle or Jest install): each is written by a small program from the
# tool's published output format, as the tool prints it — a Kubernetes event stream (`kubectl
# get events --watch`), a systemd journal (`journalctl -o short-iso`), a GitHub Actions job log
# (its `##[group]` and `##[error]` commands), a Jest run, a Docker BuildKit build (`--progress
# plain`) and a Gradle build. Each has one failure (or two) among routine lines, and the lines a
# developer must see are the failure's.
#
# Run it by hand; the outputs are committed, so the tests and the signal gate need none of it.
#
#   bash tests/corpus/generate-infra.sh
set -euo pipefail
# shellcheck source=tests/corpus/lib.sh
source "$(dirname "$0")/lib.sh"

# terraform apply: 120 resources, one whose provisioner fails (parallelism 1, so the order is
# the plan's).
mkdir -p "$work/tf" && cd "$work/tf"
for i in $(seq 1 120); do
    if [ "$i" = 77 ]; then
        printf 'resource "terraform_data" "svc_%d" {\n  input = "service-%d"\n  provisioner "local-exec" {\n    command = "echo migrating orders schema; echo psql: error: connection to server at 10.0.3.12, port 5432 failed: Connection refused >&2; exit 2"\n  }\n}\n\n' "$i" "$i"
    else
        printf 'resource "terraform_data" "svc_%d" {\n  input = "service-%d"\n}\n\n' "$i" "$i"
    fi
done > main.tf
TF_CLI_CONFIG_FILE=/dev/null terraform init -no-color > /dev/null
# The ids terraform_data draws are random: the output is the run's, as it was.
TF_CLI_CONFIG_FILE=/dev/null terraform apply -auto-approve -no-color -parallelism=1 2>&1 | out terraform-apply || true
must_grep terraform-apply 'Error: local-exec provisioner error' 'with terraform_data.svc_77,' \
    '(local-exec): psql: error: connection to server'

cd "$work"
python3 - "$here" <<'PY'
import random, sys
from pathlib import Path

here = Path(sys.argv[1])
rng = random.Random(66)


def write(name, lines, must):
    text = "\n".join(lines) + "\n"
    (here / f"{name}.out").write_text(text)
    for line in must:
        assert line in lines, (name, line)
    (here / f"{name}.must").write_text("\n".join(must) + "\n")


# kubectl get events --watch: a rollout's routine events, one pod crash-looping, one failed
# mount.
lines = ["LAST SEEN   TYPE      REASON              OBJECT                                MESSAGE"]
must = []
for i in range(900):
    pod = f"pod/shop-api-7c9d8f6b5-{rng.randrange(16**5):05x}"
    reason, message = rng.choice([
        ("Scheduled", f"Successfully assigned prod/{pod[4:]} to node-{rng.randrange(1, 9)}"),
        ("Pulled", 'Container image "registry.local/shop-api:4.2.1" already present on machine'),
        ("Created", "Created container api"),
        ("Started", "Started container api"),
    ])
    lines.append(f"{rng.randrange(1, 59)}s         Normal    {reason:<19} {pod:<37} {message}")
    if i == 430:
        line = ("12s         Warning   BackOff             pod/shop-worker-5f7b9c-x2k8q          "
                "Back-off restarting failed container worker in pod shop-worker-5f7b9c-x2k8q_prod(3c1e)")
        lines.append(line)
        must.append(line)
    if i == 700:
        line = ("8s          Warning   FailedMount         pod/shop-db-0                         "
                'MountVolume.SetUp failed for volume "data" : secret "db-credentials" not found')
        lines.append(line)
        must.append(line)
write("kubectl-events", lines, must)

# journalctl -o short-iso: a day of a host's routine units, one service failing to start.
lines = []
for i in range(2400):
    t = f"2026-11-25T{8 + i // 300:02d}:{(i // 5) % 60:02d}:{(i * 7) % 60:02d}+0000"
    unit, message = rng.choice([
        ("CRON[2113]", "(root) CMD (/usr/local/bin/rotate-logs)"),
        ("systemd[1]", "Started session-42.scope - Session 42 of User deploy."),
        ("sshd[3377]", "Accepted publickey for deploy from 10.0.0.8 port 51234 ssh2"),
        ("nginx[911]", "worker process 912 exited with code 0"),
    ])
    lines.append(f"{t} web-3 {unit}: {message}")
    if i == 1500:
        lines += [
            "2026-11-25T13:00:01+0000 web-3 systemd[1]: Starting orders.service - Orders API...",
            "2026-11-25T13:00:02+0000 web-3 orders[4410]: panic: open /etc/orders/config.yaml: permission denied",
            "2026-11-25T13:00:02+0000 web-3 systemd[1]: orders.service: Main process exited, code=exited, status=2/INVALIDARGUMENT",
            "2026-11-25T13:00:02+0000 web-3 systemd[1]: orders.service: Failed with result 'exit-code'.",
            "2026-11-25T13:00:02+0000 web-3 systemd[1]: Failed to start orders.service - Orders API.",
        ]
write("journalctl", lines, [
    "2026-11-25T13:00:02+0000 web-3 orders[4410]: panic: open /etc/orders/config.yaml: permission denied",
    "2026-11-25T13:00:02+0000 web-3 systemd[1]: Failed to start orders.service - Orders API.",
])

# A GitHub Actions job log: setup, a long install, a test step that fails.
lines = ["2026-11-25T09:00:00.0000000Z ##[group]Run actions/checkout@v4",
         "2026-11-25T09:00:01.0000000Z Syncing repository: shop/api",
         "2026-11-25T09:00:02.0000000Z ##[endgroup]",
         "2026-11-25T09:00:03.0000000Z ##[group]Run npm ci"]
for i in range(700):
    lines.append(f"2026-11-25T09:00:{3 + i // 60:02d}.{i:07d}Z npm http fetch GET 200 https://registry.npmjs.org/pkg-{i} {rng.randrange(5, 90)}ms (cache hit)")
lines += ["2026-11-25T09:01:20.0000000Z added 700 packages in 77s",
          "2026-11-25T09:01:20.0000000Z ##[endgroup]",
          "2026-11-25T09:01:21.0000000Z ##[group]Run npm test"]
for i in range(300):
    lines.append(f"2026-11-25T09:01:{21 + i // 20:02d}.{i:07d}Z   ✓ cart > case {i} ({rng.randrange(1, 9)} ms)")
    if i == 211:
        lines += ["2026-11-25T09:01:31.0000000Z   ✗ cart > applies the member discount (12 ms)",
                  "2026-11-25T09:01:31.0000000Z     AssertionError: expected 90 to equal 81"]
lines += ["2026-11-25T09:01:40.0000000Z  Test Files  1 failed | 39 passed (40)",
          "2026-11-25T09:01:40.0000000Z       Tests  1 failed | 299 passed (300)",
          "2026-11-25T09:01:40.0000000Z ##[error]Process completed with exit code 1.",
          "2026-11-25T09:01:40.0000000Z ##[endgroup]",
          "2026-11-25T09:01:41.0000000Z Post job cleanup.",
          "2026-11-25T09:01:41.0000000Z Cleaning up orphan processes"]
write("github-actions-log", lines, [
    "2026-11-25T09:01:31.0000000Z   ✗ cart > applies the member discount (12 ms)",
    "2026-11-25T09:01:31.0000000Z     AssertionError: expected 90 to equal 81",
    "2026-11-25T09:01:40.0000000Z ##[error]Process completed with exit code 1.",
])

# Jest: 80 suites passing, one failing with its diff, and the summary.
lines = []
for i in range(80):
    lines.append(f"PASS src/feature{i}/feature{i}.test.ts ({rng.randrange(1, 4)}.{rng.randrange(100, 999)} s)")
    if i == 52:
        lines += [
            "FAIL src/checkout/total.test.ts",
            "  ● checkout › total › adds shipping once",
            "",
            "    expect(received).toBe(expected) // Object.is equality",
            "",
            "    Expected: 1499",
            "    Received: 1998",
            "",
            "      12 |   it('adds shipping once', () => {",
            "      13 |     const cart = makeCart([item(999)]);",
            "    > 14 |     expect(total(cart)).toBe(1499);",
            "         |                         ^",
            "      15 |   });",
            "",
            "      at Object.toBe (src/checkout/total.test.ts:14:25)",
            "",
        ]
lines += ["Test Suites: 1 failed, 80 passed, 81 total",
          "Tests:       1 failed, 611 passed, 612 total",
          "Snapshots:   0 total",
          "Time:        41.62 s",
          "Ran all test suites."]
write("jest", lines, ["FAIL src/checkout/total.test.ts", "  ● checkout › total › adds shipping once",
                      "    Expected: 1499", "    Received: 1998"])

# docker build --progress plain: many layer steps, an apt step that fails.
lines = ["#0 building with \"default\" instance using docker driver", "",
         "#1 [internal] load build definition from Dockerfile", "#1 transferring dockerfile: 612B done", "#1 DONE 0.0s"]
for i in range(400):
    lines.append(f"#7 {2.0 + i * 0.05:.3f} Get:{i + 1} http://deb.debian.org/debian bookworm/main amd64 lib{i}-dev amd64 1.{i}.0-1 [{rng.randrange(20, 900)} kB]")
lines += [
    "#7 22.413 E: Unable to locate package libssl1.1",
    "#7 ERROR: process \"/bin/sh -c apt-get update && apt-get install -y libssl1.1\" did not complete successfully: exit code: 100",
    "------",
    " > [3/6] RUN apt-get update && apt-get install -y libssl1.1:",
    "------",
    "Dockerfile:4",
    "--------------------",
    "   3 |     WORKDIR /app",
    "   4 | >>> RUN apt-get update && apt-get install -y libssl1.1",
    "   5 |     COPY . .",
    "--------------------",
    "ERROR: failed to solve: process \"/bin/sh -c apt-get update && apt-get install -y libssl1.1\" did not complete successfully: exit code: 100",
]
write("docker-build", lines, ["#7 22.413 E: Unable to locate package libssl1.1",
                              "ERROR: failed to solve: process \"/bin/sh -c apt-get update && apt-get install -y libssl1.1\" did not complete successfully: exit code: 100"])

# A Gradle build: many tasks, one compile error in the middle with --continue, and the summary.
lines = ["> Configure project :app"]
for i in range(600):
    lines.append(f"> Task :module{i % 60}:{rng.choice(['compileJava', 'processResources', 'classes', 'jar', 'test'])} {rng.choice(['UP-TO-DATE', 'NO-SOURCE', ''])}".rstrip())
    if i == 333:
        lines += ["> Task :billing:compileJava FAILED",
                  "/work/billing/src/main/java/shop/billing/Invoice.java:41: error: incompatible types: possible lossy conversion from long to int",
                  "        int cents = order.totalCents();",
                  "                                    ^",
                  "1 error"]
lines += ["", "FAILURE: Build failed with an exception.", "",
          "* What went wrong:", "Execution failed for task ':billing:compileJava'.",
          "> Compilation failed; see the compiler error output for details.", "",
          "BUILD FAILED in 48s", "412 actionable tasks: 87 executed, 325 up-to-date"]
write("gradle-build", lines, [
    "/work/billing/src/main/java/shop/billing/Invoice.java:41: error: incompatible types: possible lossy conversion from long to int",
    "Execution failed for task ':billing:compileJava'.",
    "BUILD FAILED in 48s",
])
PY
