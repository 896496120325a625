#!/usr/bin/env bash
# The main job of the README: prepare the machine, start a node, run a
# sandbox in it. Until the walking skeleton lands, a node cannot run
# sandboxes: this builds everything and says so honestly.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo
echo "aenv: build OK. A node cannot run sandboxes yet: the node daemon and the"
echo "qemu driver arrive with the walking-skeleton issue. Nothing was started."
