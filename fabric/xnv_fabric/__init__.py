# SPDX-License-Identifier: BSD-3-Clause
"""xnv_fabric: multi-host fabric tooling of XenNetVM (fabric/README.md):
service chains placed on several hosts, each running xnv-core beside an
Open vSwitch bridge, joined by VXLAN.

Modules: `topology` (the TOML topology file: parse, validate, the move
edit), `plan` (each host's xnv-core config and OpenFlow rules), `cli`
(xnv-fabric plan, apply, move, status), `sim` (simulated hosts, each a
network namespace with its own Open vSwitch).
"""
