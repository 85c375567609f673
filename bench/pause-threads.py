"""
Which threads of a bench server held the core during its event-loop pauses
(docs/PERFORMANCE.md, issue 38, h16-pauses). Node names every thread `node`,
so threads are told apart by their stacks: V8's concurrent compiler and GC
jobs on its platform threads, the history thread (a worker), the libuv pool.

  perf record -e cpu-clock -F 2000 -C 0 -g -k CLOCK_MONOTONIC -o DIR/perf.data -- sleep 600 &
  BENCH_PAUSES_DIR=DIR npm run bench -- write-path --only trace ...   # then stop perf with SIGINT
  perf script -i DIR/perf.data -F comm,pid,tid,time,ip,sym > DIR/perf.txt
  python3 bench/pause-threads.py DIR PID [sample period ms, 0.5 at 2 kHz]

PID: the Trellis server's (its pauses.PID.json). Prints each kind of
thread's CPU over the run and how much of it fell inside a pause over 40 ms.
"""
def classify(stack):
    s = ' '.join(stack)
    if 'ConcurrentMarking' in s: return 'GC concurrent marking'
    if 'Scaveng' in s: return 'GC scavenge'
    if 'MarkCompact' in s or 'Sweeper' in s or 'MinorMarkCompact' in s: return 'GC mark-compact/sweep'
    if 'v8::internal::Heap::' in s or 'IncrementalMarking' in s or 'LocalHeap' in s: return 'GC other'
    if 'OptimizingCompileDispatcher' in s or 'compiler::Pipeline' in s or 'maglev' in s.lower() or 'turboshaft' in s.lower(): return 'JIT compile'
    if 'uv__fs_work' in s or 'uv__fs_' in s: return 'libuv fs'
    if 'uv__work' in s or 'worker(void' in s: return 'libuv threadpool'
    if 'node::worker::Worker' in s: return 'worker JS'
    if 'uv__io_poll' in s and len(stack) < 8: return 'epoll'
    return 'JS/other'
import sys, json, os, re, collections, bisect
d=sys.argv[1]; pid=int(sys.argv[2]); period=float(sys.argv[3]) if len(sys.argv)>3 else 0.5
cur=None; wt=[]; workers=set(); allw=[]
with open(os.path.join(d,'perf.txt'),errors='replace') as f:
    for line in f:
        if not line.startswith('\t') and line.strip():
            m = re.match(r'^(.*?)\s+(\d+)/(\d+)\s+([\d.]+):', line)
            cur = [float(m.group(4)), int(m.group(3)), []] if m and int(m.group(2))==pid else None
        elif line.strip() and cur is not None:
            parts=line.strip().split(' ',1); cur[2].append(parts[1] if len(parts)>1 else '')
        elif not line.strip() and cur is not None:
            if 'node::worker::Worker::Run' in ' '.join(cur[2]) and cur[1]!=pid: workers.add(cur[1])
            allw.append((cur[0],cur[1],classify(cur[2]))); cur=None
pauses=json.load(open(os.path.join(d,f'pauses.{pid}.json')))
iv=sorted((a/1e6,b/1e6) for a,b,*_ in pauses)
starts=[a for a,b in iv]
def inpause(t):
    i=bisect.bisect_right(starts,t)-1
    return i>=0 and iv[i][1]>=t
tot=collections.Counter(); inp=collections.Counter()
for t,tid,cls in allw:
    k='serving' if tid==pid else 'history' if tid in workers else ('v8 JIT' if cls=='JIT compile' else 'v8 GC' if cls.startswith('GC') else 'other threads')
    tot[k]+=period
    if inpause(t): inp[k]+=period
print(d, 'pauses', len(pauses), 'wall in pauses', round(sum(b-a for a,b in iv),1),'s')
for k in tot: print(f'  {k}: {tot[k]/1000:.2f} s CPU, {inp[k]/1000:.2f} s of it inside a pause over 40 ms ({100*inp[k]/tot[k]:.0f}%)')
