#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""capture.py: seed corpora from real traffic.

Starts a real runtimed (private socket and state directory), drives a
real runtimed-mcp-worker over stdio through a session that calls every
tool on a real python3 kernel, and records the worker's system calls
with strace.  From the recording it writes:

  corpus/rpc/     the session's JSON-RPC lines (a few per seed)
  corpus/reply/   per tool call: "tool {arguments}" and the frames the
                  daemon sent the worker while that call ran
  corpus/daemon/  per daemon connection of the worker: the frames it
                  sent (HELLO, ROOM_CREATE, ROOM_EDIT, EXEC_RUN, ...)
  corpus/agent/   per agent the daemon started: the frames the daemon
                  sent it on fd 3 (HELLO_OK, AGENT_START, AGENT_EXECUTE)
  corpus/agentframes/  per agent: the frames it sent the daemon (HELLO,
                  AGENT_READY, AGENT_STATUS, AGENT_OUTPUT, ...), each run
                  id and cell id replaced by the markers fuzz-agentframes
                  fills in
  corpus/proxy/   a few client lines, NUL, and what the worker would send
                  the proxy for them: HELLO, WORKER_READY with the real
                  catalog, the worker's real answers as MCP {json} frames
  tools.dict      a libFuzzer dictionary of the catalog's tool names,
                  argument names and enum values (fuzz-rpc, -args, -reply)

usage: capture.py BUILDDIR FUZZDIR   (FUZZDIR is the fuzz/ of the source)
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HDR = 12


def unescape(s):
    """strace -xx string body to bytes."""
    return bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', s))


def frames(data):
    """Split a byte stream into whole frames."""
    out = []
    while len(data) >= HDR:
        length = struct.unpack('>I', data[:4])[0]
        if len(data) < HDR + length:
            break
        out.append(data[:HDR + length])
        data = data[HDR + length:]
    return out


class Session:
    def __init__(self, build, tmp):
        self.tmp = tmp
        env = dict(os.environ)
        env['RUNTIMED_SOCKET'] = os.path.join(tmp, 'sock', 'runtimed.sock')
        env['RUNTIMED_STATE_DIR'] = os.path.join(tmp, 'state')
        env['RUNTIMED_LIBEXEC_DIR'] = build + ':' + build + '/runtimed'
        env['PYDEVD_DISABLE_FILE_VALIDATION'] = '1'
        os.makedirs(os.path.join(tmp, 'sock'), mode=0o700)
        os.makedirs(os.path.join(tmp, 'state'), mode=0o700)
        self.env = env
        self.dtrace = os.path.join(tmp, 'strace-daemon.log')
        self.runtimed = os.path.join(build, 'runtimed', 'runtimed')
        self.daemon = subprocess.Popen(
            ['strace', '-f', '-o', self.dtrace, '-xx', '-s', '16777216',
             '-e', 'trace=read,readv,write,writev,execve',
             self.runtimed, '-D', '--warm-pool', '0'],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(env['RUNTIMED_SOCKET']):
                break
            time.sleep(0.05)
        self.trace = os.path.join(tmp, 'strace.log')
        self.worker = subprocess.Popen(
            ['strace', '-o', self.trace, '-xx', '-s', '16777216',
             '-e', 'trace=read,readv,write,writev,connect,close',
             os.path.join(build, 'runtimed-mcp-worker')],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=tmp)
        self.next_id = 1
        self.lines = []
        self.out = []           # (request line index, worker output line)

    def send(self, method, params=None, notify=False):
        msg = {'jsonrpc': '2.0', 'method': method}
        if params is not None:
            msg['params'] = params
        if not notify:
            msg['id'] = self.next_id
            self.next_id += 1
        line = json.dumps(msg, separators=(',', ':'))
        self.lines.append(line)
        self.worker.stdin.write(line.encode() + b'\n')
        self.worker.stdin.flush()
        if notify:
            return None
        while True:
            raw = self.worker.stdout.readline()
            self.out.append((len(self.lines) - 1, raw.rstrip(b'\n')))
            reply = json.loads(raw)
            if reply.get('id') == msg['id']:
                return reply

    def call(self, tool, args):
        r = self.send('tools/call', {'name': tool, 'arguments': args})
        return r['result'].get('structuredContent', {})

    def close(self):
        self.worker.stdin.close()
        self.worker.wait(timeout=30)
        # strace passes no signal on: ask the daemon itself to stop.
        subprocess.run([self.runtimed, 'stop'], env=self.env,
                       stdout=subprocess.DEVNULL, timeout=30)
        self.daemon.wait(timeout=30)


def session(s):
    s.send('initialize', {'protocolVersion': '2025-11-25',
                          'capabilities': {},
                          'clientInfo': {'name': 'capture', 'version': '1'}})
    s.send('notifications/initialized', notify=True)
    s.send('tools/list')
    h = s.call('create_notebook', {})['notebook_handle']
    t = {'notebook_handle': h}
    s.call('edit_cells', dict(t, edits=[
        {'op': 'insert', 'after': 'BOTTOM', 'cell_type': 'code',
         'source': 'print("hello")\n6*7'},
        {'op': 'insert', 'after': 'BOTTOM', 'cell_type': 'markdown',
         'source': '# Notes'},
        # update_display_data and clear_output, for corpus/agentframes.
        {'op': 'insert', 'after': 'BOTTOM', 'cell_type': 'code',
         'source': 'from IPython.display import display, clear_output\n'
                   'h = display("a", display_id=True)\nh.update("b")\n'
                   'clear_output(wait=True)\nprint("c")'},
        {'op': 'insert', 'after': 'BOTTOM', 'cell_type': 'code',
         'source': '1/0'}]))
    run = s.call('run_cells', dict(t, all=True, wait_secs=30))
    if 'execution_id' in run:
        s.call('get_results', dict(t, execution_id=run['execution_id'],
                                   timeout_secs=5))
    insp = s.call('inspect_notebook', dict(t, view='all'))
    if 'cursor' in insp:
        s.call('inspect_notebook', dict(t, after=insp['cursor'],
                                        timeout_secs=0))
    s.call('search_cells', dict(t, query='hello'))
    s.call('move_cells', dict(t, cell_ids=[1], after='TOP'))
    s.call('clear_outputs', dict(t, cell_ids=[2]))
    s.call('get_kernel_info', t)
    s.call('list_kernels', {})
    s.call('list_notebooks', {})
    s.call('export_notebook', dict(t, format='markdown'))
    c = s.call('add_comment', dict(t, cell_id=0, body='why 42?'))
    if 'thread_id' in c:
        s.call('reply_comment', dict(t, thread_id=c['thread_id'],
                                     body='it is the answer'))
        s.call('resolve_comment', dict(t, thread_id=c['thread_id']))
    s.call('save_notebook', dict(t, path='saved.ipynb'))
    s.call('interrupt_kernel', t)
    s.call('restart_kernel', t)
    s.call('select_kernel', dict(t, kernel='python3'))
    h2 = s.call('connect_notebook', {'path': 'saved.ipynb'})
    s.send('resources/list')
    s.call('disconnect_notebook', {'notebook_handle': h})
    if 'notebook_handle' in h2:
        s.call('disconnect_notebook',
               {'notebook_handle': h2['notebook_handle']})


def parse(trace):
    """(tool, args) marks and per-fd streams from the strace log."""
    conns = {}          # fd -> {'in': [(mark, bytes)], 'out': bytes}
    done = []
    mark = None
    pat = re.compile(r'^(\w+)\((\d+), (.*)\) += (-?\d+)')
    for line in open(trace, errors='replace'):
        m = pat.match(line)
        if m is None:
            continue
        call, fd, rest, rv = m.group(1), int(m.group(2)), m.group(3), \
            int(m.group(4))
        if call == 'connect' and 'AF_UNIX' in rest and rv == 0:
            conns[fd] = {'in': [], 'out': b''}
        elif call == 'close' and fd in conns:
            done.append(conns.pop(fd))
        elif call in ('read', 'readv') and rv > 0:
            data = unescape(rest)[:rv]
            if fd == 0:
                for l in data.split(b'\n'):
                    try:
                        msg = json.loads(l)
                    except ValueError:
                        continue
                    if msg.get('method') == 'tools/call':
                        mark = (msg['params']['name'],
                                msg['params'].get('arguments', {}))
            elif fd in conns:
                conns[fd]['in'].append((mark, data))
        elif call in ('write', 'writev') and rv > 0 and fd in conns:
            conns[fd]['out'] += unescape(rest)[:rv]
    return done + list(conns.values())


def pack(v):
    """The msgpack of a few simple values (no msgpack module needed)."""
    if v is True or v is False:
        return b'\xc3' if v else b'\xc2'
    if isinstance(v, int):
        return struct.pack('>Bq', 0xd3, v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xa0 | len(b)]) + b
        if len(b) < 256:
            return b'\xd9' + bytes([len(b)]) + b
        if len(b) < 65536:
            return b'\xda' + struct.pack('>H', len(b)) + b
        return b'\xdb' + struct.pack('>I', len(b)) + b
    return bytes([0x80 | len(v)]) + b''.join(pack(k) + pack(x)
                                            for k, x in v.items())


def frame(typ, rid, body):
    return struct.pack('>IHBBI', len(body), typ, 1, 0, rid) + body


def agent_relative(hello_ok):
    """What the daemon sends an agent, with paths fuzz-agent keeps."""
    return (hello_ok +
            frame(200, 2, pack({'kernel_id': 'k1', 'kernel_name': 'python3',
                                'cwd': '.', 'runtime_dir': '.',
                                'state_dir': '.'})) +
            frame(202, 3, pack({'exec_id': 'e1', 'cell_id': 'c1',
                                'code': '6*7', 'stop_on_error': True,
                                'silent': False})) +
            frame(206, 4, b'\x80') + frame(207, 5, pack({'restart': True})) +
            frame(6, 6, b'\x80') + frame(4, 7, b'\x80') +
            frame(999, 8, b'\x80'))


def parse_agents(trace, calls=('read', 'readv')):
    """Per agent process: the bytes it read (or wrote) on fd 3."""
    agents, pending = {}, {}
    whole = re.compile(r'^(\d+) +(\w+)\((.*)\) += (-?\d+)')
    start = re.compile(r'^(\d+) +(\w+)\((.*) <unfinished \.\.\.>')
    resumed = re.compile(r'^(\d+) +<\.\.\. (\w+) resumed>(.*)\) += (-?\d+)')
    for line in open(trace, errors='replace'):
        m = whole.match(line)
        if m is not None:
            pid, call, rest, rv = m.groups()
        elif start.match(line) is not None:
            pid, call, rest = start.match(line).groups()
            pending[pid] = rest
            if call != 'execve':
                continue
            rv = '0'
        elif resumed.match(line) is not None:
            pid, call, rest, rv = resumed.match(line).groups()
            rest = pending.pop(pid, '') + rest
        else:
            continue
        rv = int(rv)
        if call == 'execve':
            path = unescape(rest.split(',', 1)[0])
            if path.endswith(b'/runtimed-agent'):
                agents[pid] = b''
            else:
                agents.pop(pid, None)
        elif call in calls and pid in agents and \
                rest.startswith('3, ') and rv > 0:
            agents[pid] += unescape(rest)[:rv]
    return [v for v in agents.values() if v]


# fuzz-agentframes puts the run and cell in flight where these are.
EXEC_MARK = b'@@@@@@@@@@@@@@@@FUZZ_EXEC_ID@@@@@@@@'
CELL_MARK = b'@FZCELL@'


def agent_marked(fr):
    """An agent's frame with its run and cell ids as the markers."""
    fr = re.sub(rb'[0-9a-f]{8}-[0-9a-f]{12}-[0-9a-f]{14}', EXEC_MARK, fr)
    return re.sub(rb'(\xa7cell_id\xa8)[0-9a-f]{8}',
                  lambda m: m.group(1) + CELL_MARK, fr)


def main():
    build, fuzzdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = tempfile.mkdtemp(prefix='capture-')
    try:
        s = Session(build, tmp)
        try:
            session(s)
        finally:
            s.close()
        corpus = os.path.join(fuzzdir, 'corpus')
        os.makedirs(os.path.join(corpus, 'proxy'), exist_ok=True)
        catalog = subprocess.run(
            [os.path.join(build, 'runtimed-mcp-worker'), '--print-catalog'],
            capture_output=True, check=True).stdout.strip().decode()
        words = set()
        for tool in json.loads(catalog)['tools']:
            words.add(tool['name'])
            for name, prop in tool['inputSchema'].get(
                    'properties', {}).items():
                words.add(name)
                words.update(prop.get('enum', []))
                words.update(prop.get('items', {}).get('properties', {}))
                for v in prop.get('items', {}).get('properties',
                                                   {}).values():
                    words.update(v.get('enum', []))
        with open(os.path.join(fuzzdir, 'tools.dict'), 'w') as f:
            f.write('# tool names, argument names, enum values '
                    '(fuzz/capture.py)\n')
            for w in sorted(words):
                f.write('"\\"%s\\""\n' % w)
        hello = frame(1, 1, pack({'version': 1, 'kind': 'worker',
                                  'label': 'runtimed-mcp-worker capture',
                                  'pid': 4242}))
        # The proxy ignores the catalog (tools/list teaches it): two
        # tools of it keep the seed small.
        cat = json.loads(catalog)
        cat['tools'] = cat['tools'][:2]
        ready = frame(301, 0, pack({'catalog': json.dumps(
            cat, separators=(',', ':'))}))
        for i in range(0, len(s.lines), 4):
            answers = b''.join(frame(300, 0, pack({'json': o.decode()}))
                               for k, o in s.out if i <= k < i + 4)
            with open(os.path.join(corpus, 'proxy', 'session-%02d' % i),
                      'wb') as f:
                # One seed carries WORKER_READY.
                f.write('\n'.join(s.lines[i:i + 4]).encode() + b'\n\0' +
                        hello + (ready if i == 0 else b'') + answers)
        os.makedirs(os.path.join(corpus, 'agent'), exist_ok=True)
        for n, stream in enumerate(parse_agents(s.dtrace)):
            got = frames(stream)
            with open(os.path.join(corpus, 'agent', 'agent-%02d' % n),
                      'wb') as f:
                f.write(b''.join(got))
            if n == 0 and got:
                with open(os.path.join(corpus, 'agent', 'start-relative'),
                          'wb') as f:
                    f.write(agent_relative(got[0]))
        sub = os.path.join(corpus, 'agentframes')
        os.makedirs(sub, exist_ok=True)
        for n, stream in enumerate(parse_agents(s.dtrace,
                                                ('write', 'writev'))):
            got = [agent_marked(fr) for fr in frames(stream)]
            with open(os.path.join(sub, 'agent-%02d' % n), 'wb') as f:
                f.write(b''.join(got))
            types = [struct.unpack('>H', fr[4:6])[0] for fr in got]
            if n == 0 and 204 in types:
                # A real agent no longer refuses a cell: the first cell
                # as recorded, then ERROR to the second's AGENT_EXECUTE
                # (request 3, after AGENT_START and the first), a PING.
                with open(os.path.join(sub, 'refused-execute'),
                          'wb') as f:
                    f.write(b''.join(got[:types.index(204) + 1]) +
                            frame(5, 3, pack({
                                'code': 'kernel_unavailable',
                                'message': 'kernel is not ready'})) +
                            frame(6, 7, pack({})))
        for sub in ('rpc', 'reply', 'daemon'):
            os.makedirs(os.path.join(corpus, sub), exist_ok=True)
        # fuzz-rpc's daemon end names its notebook fuzz-nb; each seed
        # attaches it first.
        attach = ('{"jsonrpc":"2.0","id":0,"method":"tools/call","params":'
                  '{"name":"create_notebook","arguments":{}}}')
        for i in range(0, len(s.lines), 4):
            lines = [re.sub(r'"notebook_handle":"nbh_[0-9a-f]+"',
                            '"notebook_id":"fuzz-nb"', l)
                     for l in s.lines[i:i + 4]]
            with open(os.path.join(corpus, 'rpc', 'session-%02d' % i),
                      'w') as f:
                f.write('\n'.join([attach] + lines) + '\n')
        replies = {}
        for n, c in enumerate(parse(s.trace)):
            # The daemon's frames, each credited to the call it came in.
            stream, marks = b'', []
            for mark, data in c['in']:
                marks.append((len(stream), mark))
                stream += data
            off = 0
            for fr in frames(stream):
                mark = [m for o, m in marks if o <= off][-1]
                off += len(fr)
                typ = struct.unpack('>H', fr[4:6])[0]
                if mark is None or typ == 2:        # HELLO_OK
                    continue
                key = json.dumps(mark, sort_keys=True)
                replies.setdefault(key, []).append(fr)
            out = frames(c['out'])
            if not out:
                continue
            with open(os.path.join(corpus, 'daemon', 'conn-%02d' % n),
                      'wb') as f:
                f.write(b''.join(out))
            # Each request alone, after HELLO and the join if any.
            types = [struct.unpack('>H', fr[4:6])[0] for fr in out]
            head = 2 if len(out) > 1 and types[1] in (112, 114) else 1
            for k in range(head, len(out)):
                with open(os.path.join(corpus, 'daemon', 'conn-%02d-%02d-%d'
                                       % (n, k, types[k])), 'wb') as f:
                    f.write(b''.join(out[:head] + [out[k]]))
        for n, (key, frs) in enumerate(sorted(replies.items())):
            tool, args = json.loads(key)
            if 'notebook_handle' in args:
                # The fuzz daemon end names its notebook fuzz-nb.
                args = dict(args)
                del args['notebook_handle']
                args['notebook_id'] = 'fuzz-nb'
            head = '%s %s\n' % (tool, json.dumps(args,
                                                 separators=(',', ':')))
            with open(os.path.join(corpus, 'reply', '%02d-%s' % (n, tool)),
                      'wb') as f:
                f.write(head.encode() + b''.join(frs))
    finally:
        if os.environ.get('CAPTURE_KEEP'):
            print('capture: kept', tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
