#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks `kjitctl report --format graph` against the other reports of
calls, for tests/guest/record-report.sh.  Reads the graph as printed (the
ftrace function_graph layout), not the JSON, so what a user sees is what
is checked.

  graph_check.py folded GRAPH FOLDED_CALLS FOLDED_TIME
      `--format folded --weight calls` has, per stack, how many calls the
      graph shows with that stack, and `--weight time` their self time: the
      call's duration less its callees' (ns; the graph prints us with three
      decimals, so ns exactly).
  graph_check.py calltrace GRAPH CALLTRACE_JSON
      The graph's calls (every function but the entries at its roots), in
      the order printed, equal the sequence of calls that calltrace recorded
      on a second run of the same workload (`--format json` "calls", oldest
      first).  Left out of both: the scheduler's functions, which a
      preemption point calls only when a timer interrupt asked for a
      reschedule; `__schedule` runs natively, so they make no other calls.
"""
import json
import re
import sys

# A function of a module is named module:function, as in every kjit report
# (ftrace's own graph drops the module).
LINE = re.compile(r'^ \d+\) +(?:[!+ ] +([0-9]+\.[0-9]{3}) us +|\(unfinished\) +| +)\|  ( *)'
                  r'(?:((?:[A-Za-z0-9_]+:)?[A-Za-z0-9_.]+)\(\)( \{|;)|\})$')
SCHEDULER = re.compile(r'^(preempt_schedule\w*|__schedule|schedule)$')


class Call:
    def __init__(self, name, depth):
        self.name, self.depth, self.ns, self.children = name, depth, None, []


def parse_graph(path):
    """Root calls of every thread, each with its children and duration."""
    roots, stack = [], []
    for line in open(path):
        if line.startswith('#') or line.startswith(' ---') or line.startswith('  thread '):
            continue
        m = LINE.match(line.rstrip('\n'))
        if not m:
            sys.exit('graph_check: a graph line not in the function_graph layout: %r' % line)
        us, indent, name, kind = m.groups()
        depth = len(indent) // 2
        ns = round(float(us) * 1000) if us else None
        if name is None:                       # "}" closes the open call
            if not stack or stack[-1].depth != depth:
                sys.exit('graph_check: a } at depth %d closes nothing' % depth)
            stack.pop().ns = ns
            continue
        if len(stack) != depth:
            sys.exit('graph_check: %s() at depth %d under %d open calls' % (name, depth, len(stack)))
        c = Call(name, depth)
        (stack[-1].children if stack else roots).append(c)
        if kind == ' {':
            stack.append(c)
        else:
            c.ns = ns
    if stack:
        sys.exit('graph_check: %s() is never closed' % stack[-1].name)
    return roots


def walk(calls, prefix=()):
    for c in calls:
        yield prefix + (c.name,), c
        yield from walk(c.children, prefix + (c.name,))


def read_folded(path):
    return {k: int(v) for k, v in (l.rsplit(' ', 1) for l in open(path) if l.strip())}


def check_folded(graph, folded_calls, folded_time):
    by_calls, by_time = {}, {}
    for path, c in walk(parse_graph(graph)):
        if c.ns is None:
            sys.exit('graph_check: %s() unfinished: no duration to weigh' % c.name)
        key = ';'.join(path)
        by_calls[key] = by_calls.get(key, 0) + 1
        self_ns = c.ns - sum(ch.ns for ch in c.children)
        # Durations come from the CPUs' clocks: after a migration a callee
        # can outlast its caller by the skew, and the caller's self time is 0.
        by_time[key] = by_time.get(key, 0) + max(0, self_ns)
    calls, time = read_folded(folded_calls), read_folded(folded_time)
    for what, want, got in (('calls', by_calls, calls), ('time', by_time, time)):
        if want != got:
            diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            sys.exit('graph_check: folded --weight %s differs from the graph at %d stacks, first %s: graph %s, folded %s'
                     % (what, len(diff), diff[0], want.get(diff[0]), got.get(diff[0])))
    if calls == time:
        sys.exit('graph_check: --weight time printed the calls')
    print('%d stacks, %d calls, %d ns' % (len(calls), sum(calls.values()), sum(time.values())))


def check_calltrace(graph, calltrace_json):
    def kept(names):
        return [n for n in names if not SCHEDULER.match(n)]
    roots = parse_graph(graph)
    graph_calls = kept(c.name for r in roots for _, c in walk(r.children))
    ct = json.load(open(calltrace_json))
    if ct['stats'].get('scalar1', '0') != '0':
        sys.exit('graph_check: calltrace\'s ring lost its oldest %s calls' % ct['stats']['scalar1'])
    traced = kept(c['function'].split('+')[0] for c in ct['calls'])
    if not graph_calls:
        sys.exit('graph_check: the graph has no calls')
    if graph_calls != traced:
        i = next(i for i, (a, b) in enumerate(zip(graph_calls + [None], traced + [None])) if a != b)
        sys.exit('graph_check: graph %d calls, calltrace %d; from call %d the graph has %s, calltrace %s'
                 % (len(graph_calls), len(traced), i, graph_calls[i:i + 4], traced[i:i + 4]))
    print('%d entries, %d calls in the same order, %d distinct functions'
          % (len(roots), len(graph_calls), len(set(graph_calls))))


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'folded':
        check_folded(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'calltrace':
        check_calltrace(*sys.argv[2:])
    else:
        sys.exit(__doc__)
