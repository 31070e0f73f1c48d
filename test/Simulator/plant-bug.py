#!/usr/bin/env python3
"""Plants one synchronization bug in synchronization-level fa4 IR (stdin to
stdout), for the simulator's negative tests.

Barriers are found by their channel names (the fa4.name of their
nvgpu.mbarrier.create), roles by their fa4.role names, TMEM buffers by the
fa4.name of their views, so the edits survive renumbered SSA values.

  drop-wait BARRIER ROLE          delete ROLE's first wait on BARRIER
  drop-fence BARRIER ROLE         delete the tcgen05 after_thread_sync fence
                                  that follows ROLE's first wait on BARRIER
  flip-parity BARRIER ROLE        ROLE's first wait on BARRIER waits for the
                                  other phase parity
  drop-tmem-wait ROLE [KIND]      delete ROLE's first nvvm.tcgen05.wait <KIND>
                                  (load or store; load by default)
  drop-proxy-fence ROLE           delete ROLE's first nvvm.fence.proxy
  drop-warp-sync ROLE N           delete ROLE's N-th nvvm.bar.warp.sync (from 1)
  move-proxy-fence ROLE BARRIER   move ROLE's first nvvm.fence.proxy to
                                  just after ROLE's next arrive on BARRIER
  set-count BARRIER COUNT         initialize BARRIER with COUNT arrivals
  drop-commit BARRIER             delete the first fa4.mma.commit on BARRIER
  drop-store-commit ROLE          delete ROLE's first nvvm.cp.async.bulk.commit.group
  move-tmem BUFFER COLUMN         place TMEM buffer BUFFER at COLUMN
  shift-view ROLE BYTES           ROLE's first unnamed memref.view at byte
                                  0 views at BYTES instead
  shift-tma-column ROLE ELEMENTS  ROLE's first TMA load reads from innermost
                                  coordinate ELEMENTS instead of 0
  set-wgmma-wait ROLE N PENDING   ROLE's N-th fa4.wgmma.wait (from 1) waits
                                  until PENDING groups are in flight instead
  bypass-wgmma-wait ROLE          ROLE's first fa4.wgmma.wait of one fragment
                                  is deleted; its uses read the fragment
  set-threads ID THREADS          every named_barrier op on barrier ID counts
                                  THREADS threads
  drop-sync ROLE ID               delete ROLE's first fa4.named_barrier.sync
                                  on barrier ID
  one-half ROLE                   ROLE's exchanges through a two-half
                                  memref<2x128xf32> all use half 0 (the
                                  parity that picks the half is 0)
  drop-dealloc                    delete the fa4.tmem.dealloc
  dealloc-warp WARP               the fa4.tmem.dealloc runs in warp WARP
                                  instead of the first warp
"""

import re
import sys


def fail(message):
    sys.exit("plant-bug: " + message)


def barrier_value(lines, name):
    for line in lines:
        m = re.match(r'\s*(%\w+) = nvgpu\.mbarrier\.create \{fa4\.name = "'
                     + re.escape(name) + r'"\}', line)
        if m:
            return m.group(1)
    fail("no mbarrier named '%s'" % name)


def role_range(lines, role):
    starts = [i for i, l in enumerate(lines) if 'fa4.role "' in l]
    for n, i in enumerate(starts):
        if 'fa4.role "%s"' % role in lines[i]:
            end = starts[n + 1] if n + 1 < len(starts) else len(lines)
            return i, end
    fail("no role '%s'" % role)


def first_line(lines, begin, end, pattern, what):
    for i in range(begin, end):
        if re.search(pattern, lines[i]):
            return i
    fail("no %s" % what)


def main():
    if len(sys.argv) < 2:
        fail(__doc__)
    bug, args = sys.argv[1], sys.argv[2:]
    lines = sys.stdin.read().split("\n")

    if bug in ("drop-wait", "flip-parity", "drop-fence"):
        barrier, role = args
        group = barrier_value(lines, barrier)
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end,
                       r"nvgpu\.mbarrier\.try_wait\.parity %s\[" % re.escape(group),
                       "wait on '%s' in role '%s'" % (barrier, role))
        if bug == "drop-wait":
            del lines[i]
        elif bug == "drop-fence":
            if "nvvm.tcgen05.fence <after>" not in lines[i + 1]:
                fail("no fence after the wait on '%s' in role '%s'" % (barrier, role))
            del lines[i + 1]
        else:
            m = re.search(r"\], (%\w+), ", lines[i])
            indent = re.match(r"\s*", lines[i]).group(0)
            lines[i] = lines[i].replace("], %s, " % m.group(1),
                                        "], %planted_parity, ", 1)
            lines[i:i] = [indent + "%planted_true = arith.constant true",
                          indent + "%%planted_parity = arith.xori %s, %%planted_true : i1"
                          % m.group(1)]
    elif bug == "set-count":
        barrier, count = args
        group = barrier_value(lines, barrier)
        planted = False
        for i, line in enumerate(lines):
            m = re.match(r"(\s*)nvgpu\.mbarrier\.init " + re.escape(group)
                         + r"\[(%\w+)\], (%\w+)", line)
            if m:
                lines[i] = line.replace(", %s " % m.group(3), ", %planted_count ", 1)
                lines[i:i] = [m.group(1) + "%%planted_count = arith.constant %s : index"
                              % count]
                planted = True
                break
        if not planted:
            fail("no initialization of '%s'" % barrier)
    elif bug == "drop-tmem-wait":
        role, kind = args[0], args[1] if len(args) > 1 else "load"
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end, r"nvvm\.tcgen05\.wait <%s>" % kind,
                       "nvvm.tcgen05.wait <%s> in role '%s'" % (kind, role))
        del lines[i]
    elif bug == "drop-proxy-fence":
        (role,) = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end, r"nvvm\.fence\.proxy",
                       "nvvm.fence.proxy in role '%s'" % role)
        del lines[i]
    elif bug == "drop-warp-sync":
        role, n = args
        begin, end = role_range(lines, role)
        syncs = [i for i in range(begin, end) if "nvvm.bar.warp.sync" in lines[i]]
        if len(syncs) < int(n):
            fail("no nvvm.bar.warp.sync #%s in role '%s'" % (n, role))
        del lines[syncs[int(n) - 1]]
    elif bug == "move-proxy-fence":
        role, barrier = args
        group = barrier_value(lines, barrier)
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end, r"nvvm\.fence\.proxy",
                       "nvvm.fence.proxy in role '%s'" % role)
        j = first_line(lines, i, end,
                       r"nvgpu\.mbarrier\.arrive %s\[" % re.escape(group),
                       "arrive on '%s' after the fence in role '%s'"
                       % (barrier, role))
        lines.insert(j, lines.pop(i))
    elif bug == "drop-store-commit":
        (role,) = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end, r"nvvm\.cp\.async\.bulk\.commit\.group",
                       "nvvm.cp.async.bulk.commit.group in role '%s'" % role)
        del lines[i]
    elif bug == "drop-commit":
        (barrier,) = args
        group = barrier_value(lines, barrier)
        i = first_line(lines, 0, len(lines),
                       r"fa4\.mma\.commit %s\[" % re.escape(group),
                       "commit on '%s'" % barrier)
        del lines[i]
    elif bug == "move-tmem":
        buffer, column = args
        pattern = r'\[\d+\] \{fa4\.name = "%s"\}' % re.escape(buffer)
        count = 0
        for i, line in enumerate(lines):
            if re.search(pattern, line):
                lines[i] = re.sub(pattern, '[%s] {fa4.name = "%s"}' % (column, buffer),
                                  line)
                count += 1
        if not count:
            fail("no TMEM buffer '%s'" % buffer)
    elif bug == "shift-view":
        role, shift = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end,
                       r"= memref\.view %\w+\[%c0\w*\]\[\] :",
                       "view at byte 0 in role '%s'" % role)
        indent = re.match(r"\s*", lines[i]).group(0)
        lines[i] = re.sub(r"\[%c0\w*\]\[\]", "[%planted_shift][]", lines[i], count=1)
        lines[i:i] = [indent + "%%planted_shift = arith.constant %s : index" % shift]
    elif bug == "shift-tma-column":
        role, shift = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end, r"nvgpu\.tma\.async\.load %\w+\[%c0\w*,",
                       "TMA load from column 0 in role '%s'" % role)
        indent = re.match(r"\s*", lines[i]).group(0)
        lines[i] = re.sub(r"(nvgpu\.tma\.async\.load %\w+\[)%c0\w*,",
                          r"\1%planted_column,", lines[i], count=1)
        lines[i:i] = [indent + "%%planted_column = arith.constant %s : index" % shift]
    elif bug == "set-wgmma-wait":
        role, nth, pending = args
        begin, end = role_range(lines, role)
        waits = [i for i in range(begin, end) if "fa4.wgmma.wait " in lines[i]]
        if len(waits) < int(nth):
            fail("role '%s' has %d fa4.wgmma.wait ops" % (role, len(waits)))
        i = waits[int(nth) - 1]
        lines[i] = re.sub(r"fa4\.wgmma\.wait \d+", "fa4.wgmma.wait " + pending,
                          lines[i], count=1)
    elif bug == "bypass-wgmma-wait":
        (role,) = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end,
                       r"(%\w+) = fa4\.wgmma\.wait \d+, (%\w+) : vector",
                       "fa4.wgmma.wait of one fragment in role '%s'" % role)
        m = re.search(r"(%\w+) = fa4\.wgmma\.wait \d+, (%\w+) :", lines[i])
        result, fragment = m.group(1), m.group(2)
        del lines[i]
        for j in range(i, end - 1):
            lines[j] = re.sub(re.escape(result) + r"\b", fragment, lines[j])
    elif bug == "set-threads":
        barrier, threads = args
        count = 0
        for i, line in enumerate(lines):
            pattern = r"(fa4\.named_barrier\.(sync|arrive) %s), \d+ threads" % barrier
            if re.search(pattern, line):
                lines[i] = re.sub(pattern, r"\1, %s threads" % threads, line)
                count += 1
        if not count:
            fail("no named barrier %s" % barrier)
    elif bug == "drop-sync":
        role, barrier = args
        begin, end = role_range(lines, role)
        i = first_line(lines, begin, end,
                       r"fa4\.named_barrier\.sync %s," % re.escape(barrier),
                       "named_barrier.sync %s in role '%s'" % (barrier, role))
        del lines[i]
    elif bug == "one-half":
        (role,) = args
        begin, end = role_range(lines, role)
        planted = 0
        for i in range(begin, end):
            m = re.match(r"(\s*)(%\w+) = arith\.remui %\w+, %c2(_\d+)? : index", lines[i])
            if not m:
                continue
            use = re.compile(re.escape(m.group(2)) + r"\b")
            if any(use.search(l) and "memref<2x128xf32" in l for l in lines[i + 1:end]):
                lines[i] = "%s%s = arith.constant 0 : index" % (m.group(1), m.group(2))
                planted += 1
        if not planted:
            fail("no two-half exchange in role '%s'" % role)
    elif bug in ("drop-dealloc", "dealloc-warp"):
        i = first_line(lines, 0, len(lines), r"fa4\.tmem\.dealloc ",
                       "fa4.tmem.dealloc")
        if bug == "drop-dealloc":
            del lines[i]
        else:
            (warp,) = args
            # The scf.if around the dealloc tests thread_id < 32.
            guard = next((j for j in range(i, -1, -1)
                          if re.match(r"\s*scf\.if %\w+ \{", lines[j])), None)
            if guard is None:
                fail("no scf.if around the fa4.tmem.dealloc")
            cond = re.match(r"\s*scf\.if (%\w+) \{", lines[guard]).group(1)
            j = first_line(lines, 0, guard,
                           re.escape(cond) + r" = arith\.cmpi ult, %\w+, %\w+ : index",
                           "first-warp test of the fa4.tmem.dealloc")
            m = re.match(r"(\s*)(%\w+) = arith\.cmpi ult, (%\w+), %\w+ : index",
                         lines[j])
            indent, tid = m.group(1), m.group(3)
            first = 32 * int(warp)
            lines[j:j + 1] = [
                indent + "%%planted_first = arith.constant %d : index" % first,
                indent + "%%planted_end = arith.constant %d : index" % (first + 32),
                indent + "%%planted_from = arith.cmpi uge, %s, %%planted_first : index" % tid,
                indent + "%%planted_to = arith.cmpi ult, %s, %%planted_end : index" % tid,
                indent + "%s = arith.andi %%planted_from, %%planted_to : i1" % cond]
    else:
        fail("unknown bug '%s'" % bug)
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
