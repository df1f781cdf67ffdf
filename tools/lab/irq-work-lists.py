# SPDX-License-Identifier: GPL-2.0
"""gdb script: every CPU's pending irq_work lists, and whether one loops.

Sourced by guest-hang-dump.py (gdb -x) with the debug vmlinux loaded at the
boot's KASLR offset and $koff set to that offset.  A vCPU that never leaves
irq_work_run_list() runs a list whose last node links to itself: the list
walk there has no end.  The known way to get one is RCU's deferred
quiescent-state work re-initialised while it is still queued (kernels with
upstream b41642c87716 but without its fix 61399e0c5410, "rcu: Fix racy
re-initialization of irq_work causing hangs", such as Debian's 6.1.192):
its node, rcu_data.defer_qs_iw, is checked by name.

Per-CPU symbols are offsets into each CPU's area, not addresses: gdb
relocated them by the KASLR offset like every other symbol, so that is
taken off again before __per_cpu_offset[cpu] is added.
"""
import gdb

LIMIT = 64


def walk(first):
    """(nodes, looped): the node addresses of an llist from `first`."""
    seen = []
    node = first
    while node and len(seen) < LIMIT:
        if node in seen:
            return seen, True
        seen.append(node)
        node = int(gdb.parse_and_eval("((struct llist_node *)0x%x)->next" % node))
    return seen, False


def main():
    koff = int(gdb.parse_and_eval("$koff"))
    # The guests have a few vCPUs; a file without a live target has
    # nr_cpu_ids at its link-time value (NR_CPUS).
    ncpu = min(int(gdb.parse_and_eval("nr_cpu_ids")), 64)
    for cpu in range(ncpu):
        base = int(gdb.parse_and_eval("__per_cpu_offset[%d]" % cpu)) - koff
        for name in ("raised_list", "lazy_list"):
            try:
                head = int(gdb.parse_and_eval("(unsigned long)&%s" % name)) + base
                first = int(gdb.parse_and_eval("((struct llist_head *)0x%x)->first" % head))
            except gdb.error as e:
                print("cpu %d %s: %s" % (cpu, name, e))
                continue
            nodes, looped = walk(first)
            print("cpu %d %s: %d node(s)%s" % (cpu, name, len(nodes),
                                                " and a LOOP: irq_work_run_list() never ends" if looped else ""))
        try:
            rdp = int(gdb.parse_and_eval("(unsigned long)&rcu_data")) + base
            node = int(gdb.parse_and_eval("(unsigned long)&((struct rcu_data *)0x%x)->defer_qs_iw.node.llist" % rdp))
            nxt = int(gdb.parse_and_eval("((struct rcu_data *)0x%x)->defer_qs_iw.node.llist.next" % rdp))
        except gdb.error:
            continue  # a kernel without the deferred-QS irq_work
        if nxt == node:
            print("cpu %d rcu_data.defer_qs_iw links to itself: the kernel re-initialised it while it was "
                  "queued (upstream fix 61399e0c5410 missing); a kernel bug, not the code it interrupted" % cpu)


main()
