"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`): no extra packages.

Used by tools/check_site.py to look at the rendered pages as a reader's browser shows them: run JavaScript in
the page (is the math typeset? does a code block need horizontal scrolling? does the search box find a word?),
collect console errors and take full-page screenshots.
"""
import json, os, subprocess, tempfile, time, base64

class Browser:
    "Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no extra packages."
    def __init__(self, exe, width=1400, height=1000):
        self.prof = tempfile.TemporaryDirectory(prefix='chromium-profile-')
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        def fds():  # chromium reads commands on fd 3 and writes answers on fd 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)  # above 4, so the dup2s cannot clobber each other
            while min(a, b) <= 4: a, b = os.dup(a), os.dup(b)
            os.dup2(a, 3); os.dup2(b, 4)
        self.width, self.height = width, height
        cmd = [exe, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
               '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--hide-scrollbars',
               '--remote-debugging-pipe', f'--user-data-dir={self.prof.name}', f'--window-size={width},{height}', 'about:blank']
        self.proc = subprocess.Popen(cmd, preexec_fn=fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r); os.close(from_chrome_w)
        self._buf, self._id, self.events = b'', 0, []
        tid = self.call('Target.createTarget', url='about:blank')['targetId']
        self.session = self.call('Target.attachToTarget', targetId=tid, flatten=True)['sessionId']
        for d in ('Page', 'Runtime', 'Log'): self.call(f'{d}.enable', session=True)

    def _send(self, msg):
        os.write(self._w, json.dumps(msg).encode() + b'\0')

    def _recv(self, timeout):
        import select
        while b'\0' not in self._buf:
            r, _, _ = select.select([self._r], [], [], timeout)
            if not r: raise TimeoutError('chromium did not answer')
            chunk = os.read(self._r, 1 << 20)
            if not chunk: raise RuntimeError('chromium closed the pipe')
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b'\0')
        return json.loads(msg)

    def call(self, method, session=False, timeout=120, **params):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params}
        if session: msg['sessionId'] = self.session
        self._send(msg)
        while True:
            m = self._recv(timeout)
            if m.get('id') == self._id:
                if 'error' in m: raise RuntimeError(f'{method}: {m["error"]}')
                return m.get('result', {})
            self.events.append(m)

    def wait_event(self, name, timeout=120):
        end = time.time() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m.get('method') == name: return self.events.pop(i)
            self.events.append(self._recv(max(0.1, end - time.time())))

    def goto(self, url, timeout=120):
        self.events = [m for m in self.events if m.get('method') != 'Page.loadEventFired']
        self.call('Page.navigate', session=True, url=url)
        self.wait_event('Page.loadEventFired', timeout)

    def eval(self, expr, timeout=120):
        r = self.call('Runtime.evaluate', session=True, timeout=timeout, expression=expr, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r: raise RuntimeError(f'{expr[:80]}: {r["exceptionDetails"]}')
        return r['result'].get('value')

    def screenshot(self, path, full_page=True, max_pixels=25e6):
        "PNG of the whole page (scaled down when it has more than `max_pixels`: a long chapter is ~60,000 px tall)."
        h = int(self.eval('Math.ceil(document.documentElement.scrollHeight)')) if full_page else self.height
        scale = min(1.0, (max_pixels / (self.width * h)) ** 0.5)
        clip = {'x': 0, 'y': 0, 'width': self.width, 'height': h, 'scale': round(scale, 3)}
        data = self.call('Page.captureScreenshot', session=True, format='png', captureBeyondViewport=True,
                         clip=clip)['data']
        with open(path, 'wb') as f: f.write(base64.b64decode(data))
        return scale

    def console_errors(self):
        out = []
        for m in self.events:
            if m.get('method') == 'Runtime.exceptionThrown':
                out.append(m['params']['exceptionDetails'].get('exception', {}).get('description') or str(m['params']['exceptionDetails']))
            elif m.get('method') == 'Log.entryAdded' and m['params']['entry'].get('level') == 'error':
                out.append(m['params']['entry'].get('text', ''))
            elif m.get('method') == 'Runtime.consoleAPICalled' and m['params'].get('type') == 'error':
                out.append(' '.join(str(a.get('value', a.get('description', ''))) for a in m['params']['args']))
        self.events = [m for m in self.events if m.get('method') not in ('Runtime.exceptionThrown', 'Log.entryAdded', 'Runtime.consoleAPICalled')]
        return out

    def close(self):
        try: self.call('Browser.close', timeout=10)
        except Exception: pass
        try: self.proc.wait(10)
        except Exception: self.proc.kill()
        os.close(self._w); os.close(self._r)
        self.prof.cleanup()
