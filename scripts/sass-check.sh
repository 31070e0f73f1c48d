#!/usr/bin/env bash
# Disassembles a Blackwell cubin and checks that the hardware paths of the FA4
# kernel are there: tcgen05 MMA (UTCHMMA), TMEM loads and stores (LDTM,
# STTM), both exp2 paths (MUFU.EX2 and the FFMA polynomial), TMA loads and
# stores (UTMALDG, UTMASTG), mbarriers (SYNCS) and register reallocation
# (USETMAXREG). Prints one count per instruction class; fails if one is 0.
#
# usage: sass-check.sh KERNEL.cubin [CUOBJDUMP]
set -euo pipefail
cubin="$1"
cuobjdump="${2:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}"
sass="$("$cuobjdump" -sass "$cubin")"
status=0
for class in UTCHMMA LDTM STTM MUFU.EX2 FFMA UTMALDG UTMASTG SYNCS USETMAXREG; do
  count=$(grep -c -- "$class" <<< "$sass" || true)
  echo "$class $count"
  [ "$count" -gt 0 ] || status=1
done
exit $status
