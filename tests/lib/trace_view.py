#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers of tests/integration/trace_view.sh: what a --trace file holds,
what a viewer page shows of it, and a server for the page.

  trace_view.py serve DIR PORTFILE   serve DIR on 127.0.0.1, a port the
                                     kernel picks (written to PORTFILE)
  trace_view.py lanes TRACE          the lanes a viewer must show: one line
                                     "<process name> (pid P), <thread name>
                                     (tid T)<TAB><slices><TAB><total us>"
                                     for each thread with slices
  trace_view.py profiles DOM         what speedscope's page lists: a line
                                     "<name><TAB><total us>" per profile,
                                     then "count N" (its "(1/N)"); a page
                                     of one profile shows its name only
                                     (total -1)
  trace_view.py sandwich DOM         the symbol names of speedscope's
                                     sandwich table, one a line
"""
import functools
import html
import html.parser
import http.server
import json
import os
import re
import sys


def serve(folder, portfile):
    handler = functools.partial(Quiet, directory=folder)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def lanes(path):
    with open(path) as f:
        events = json.load(f)  # the file must be one JSON array
    pname, tname, slices = {}, {}, {}
    for e in events:
        pid, tid = e["pid"], e["tid"]
        if e["ph"] == "M" and e["name"] == "process_name":
            pname[pid] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            tname[(pid, tid)] = e["args"]["name"]
        elif e["ph"] == "X":
            slices.setdefault((pid, tid), []).append((float(e["ts"]), float(e["dur"])))
    for (pid, tid), spans in sorted(slices.items()):
        name = "%s (pid %d), %s (tid %d)" % (pname.get(pid, ""), pid, tname.get((pid, tid), ""), tid)
        print("%s\t%d\t%.3f" % (name, len(spans), covered(spans)))


def covered(spans):
    """The time the slices cover: a call inside another (a pthread call's
    system calls) is part of its parent, as the page counts a lane's time."""
    total, end = 0.0, None
    for ts, dur in sorted(spans):
        if end is None or ts >= end:
            total += dur
            end = ts + dur
        elif ts + dur > end:
            total += ts + dur - end
            end = ts + dur
    return total


UNITS = {"ns": 0.001, "µs": 1.0, "us": 1.0, "ms": 1000.0, "s": 1e6, "min": 6e7, "hr": 3.6e9}


def to_us(text):
    m = re.match(r"\s*([0-9.]+)\s*(ns|µs|us|ms|s|min|hr)\b", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else -1.0


class Rows(html.parser.HTMLParser):
    """Every <tr>: its title attribute and the text of each of its cells."""

    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = (dict(attrs).get("title"), [])
        elif tag == "td" and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self.row is not None and self.cell is not None:
            self.row[1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def parse(path):
    p = Rows()
    with open(path, encoding="utf-8") as f:
        page = f.read()
    p.feed(page)
    return p, page


def profiles(path):
    p, page = parse(path)
    for title, cells in p.rows:
        if title and len(cells) == 3:
            print("%s\t%.3f" % (title, to_us(cells[2])))
    m = re.search(r"\((\d+)/(\d+)\)", page)
    if m:
        print("count %s" % m.group(2))
        return
    # One profile: its name alone in the toolbar, no list (and no total shown).
    m = re.search(r"</div>([^<>]* \(pid \d+\), [^<>]* \(tid \d+\))<div", page)
    if m:
        print("%s\t-1" % html.unescape(m.group(1)))
    print("count %d" % (1 if m else 0))


def sandwich(path):
    p, _ = parse(path)
    for title, cells in p.rows:
        if title is None and len(cells) == 3 and "%)" in cells[0]:
            print(cells[2])


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif cmd == "lanes":
        lanes(sys.argv[2])
    elif cmd == "profiles":
        profiles(sys.argv[2])
    elif cmd == "sandwich":
        sandwich(sys.argv[2])
    else:
        sys.exit("unknown command " + cmd)
