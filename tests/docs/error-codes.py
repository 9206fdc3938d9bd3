#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""error-codes.py: the error codes the C sources can put in an ERROR
frame or a tool's structuredContent.error.code, one a line.

A code is a string literal, or a PROTO_E_* constant of
proto/proto-errors.h, in the code position of a call that sends or
reports one, or one (or a ternary of them) assigned to a variable named
code or ecode.  The JSON-RPC
error numbers (-32xxx) used are printed too, after a line "--".
Usage: error-codes.py SRCDIR"""

import os
import re
import sys

# Function -> index of its code argument.
CALLS = {
    "worker_call_error": 1,
    "worker_call_error_fields": 1,
    "toolresult_error": 0,
    "peer_send_error": 2,
    "proxy_answer_tool_error": 1,
    "tool_edit_cells_fail": 1,
    "worker_comment_finish": 2,
    "worker_daemon_die": 1,
    "worker_daemon_free": 1,
    "worker_daemon_fail_all": 1,
    "worker_daemon_fail_later": 2,
    "server_client_reply": 4,
    "room_nb_fail": 1,
    "room_edit_fail": 2,
    "agent_send_error": 1,
    "worker_files_fail": 1,
    "room_remote_finish": 3,
}
DIRS = ("proto", "common", "runtimed", "runtime-agent", "mcp-worker",
    "mcp-proxy")
LIT = re.compile(r'"([a-z]+(?:_[a-z]+)*)"')
CONST = re.compile(r"\b(PROTO_E_[A-Z_]+)\b")


def constants(top):
    """proto/proto-errors.h: PROTO_E_* -> code."""
    s = open(os.path.join(top, "proto", "proto-errors.h")).read()
    return dict(re.findall(r'#define\s+(PROTO_E_[A-Z_]+)\s+"([a-z_]+)"', s))


def codes_in(s, consts):
    """The codes an argument names, as literals or constants."""
    found = set(LIT.findall(s))
    for c in CONST.findall(s):
        if c not in consts:
            sys.exit("error-codes.py: %s is not in proto/proto-errors.h" % c)
        found.add(consts[c])
    return found


def strip_comments(s):
    return re.sub(r"/\*.*?\*/", " ", s, flags=re.S)


def args_of(s, i):
    """The top-level arguments of the call whose '(' is at s[i]."""
    depth, args, cur, j = 0, [], "", i
    while j < len(s):
        c = s[j]
        if c == '"':
            k = j + 1
            while s[k] != '"':
                k += 2 if s[k] == "\\" else 1
            cur += s[j:k + 1]
            j = k + 1
            continue
        if c == "(":
            depth += 1
            if depth == 1:
                j += 1
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args
        elif c == "," and depth == 1:
            args.append(cur)
            cur = ""
            j += 1
            continue
        cur += c
        j += 1
    return args


def main():
    top = sys.argv[1]
    consts = constants(top)
    codes, rpc = set(), set()
    call = re.compile(r"\b(" + "|".join(CALLS) + r")\s*\(")
    assign = re.compile(r"\b(?:code|ecode)\s*=\s*([^;]*);")
    for d in DIRS:
        for name in sorted(os.listdir(os.path.join(top, d))):
            if not name.endswith((".c", ".h")):
                continue
            s = strip_comments(open(os.path.join(top, d, name),
                encoding="utf-8").read())
            for m in call.finditer(s):
                a = args_of(s, m.end() - 1)
                n = CALLS[m.group(1)]
                if len(a) > n:
                    codes.update(codes_in(a[n], consts))
            for m in assign.finditer(s):
                # Literals only (a ternary of them), not a call's result.
                if "(" not in LIT.sub("", m.group(1)):
                    codes.update(codes_in(m.group(1), consts))
            rpc.update(re.findall(r"-32[0-9]{3}\b", s))
    for c in sorted(codes):
        print(c)
    print("--")
    for c in sorted(rpc):
        print(c)


main()
