// tests/web/lib.mjs - what the browser tests (webui*.mjs) share: TAP-ish reporting, the axe-core
// audit with its screenshots, the API client, and Home Assistant's ingress in small.
import http from 'node:http';
import path from 'node:path';

// ok(cond, desc, detail) prints "ok - ..." or "not ok - ..." (and up to 12 "# " lines of
// detail); audit(page, name) runs axe-core (through the debugging protocol: the pages' CSP
// allows no injected script), WCAG 2.x A and AA, then screenshots the page at desktop and
// phone width into shots, once per name; failures() counts the "not ok" lines, audited() the
// pages audited.
export function harness(axeSource, shots) {
	let failed = 0;
	const checked = new Set();
	function ok(cond, desc, detail) {
		if (cond) {
			console.log(`ok - ${desc}`);
		} else {
			failed++;
			console.log(`not ok - ${desc}`);
			if (detail !== undefined) {
				for (const l of String(detail).split('\n').slice(0, 12)) console.log(`# ${l}`);
			}
		}
	}
	async function audit(page, name) {
		await page.evaluate(axeSource);
		const r = await page.evaluate(() =>
			// eslint-disable-next-line no-undef
			axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }));
		const v = r.violations.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
		ok(v.length === 0, `axe: no WCAG A/AA violation on ${name}`, v.join('\n'));
		if (!checked.has(name)) {
			checked.add(name);
			for (const w of [1280, 360]) {
				await page.setViewportSize({ width: w, height: w === 360 ? 740 : 900 });
				await page.screenshot({ path: path.join(shots, `${name}-${w}.png`), fullPage: true });
			}
			await page.setViewportSize({ width: 1280, height: 900 });
		}
	}
	return { ok, audit, failures: () => failed, audited: () => checked.size };
}

// api(method, path, token, body) against base: {code, json}.
export function apiAt(base) {
	return async function api(method, p, token, body) {
		const r = await fetch(base + p, {
			method,
			headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
			body: body ? JSON.stringify(body) : undefined,
		});
		return { code: r.status, json: await r.json().catch(() => null) };
	};
}

// Home Assistant's ingress in small: strips prefix, adds X-Ingress-Path, streams. Resolves to
// the listening server (127.0.0.1, a free port).
export function ingressProxy(target, prefix) {
	const t = new URL(target);
	const srv = http.createServer((req, res) => {
		if (!req.url.startsWith(prefix + '/') && req.url !== prefix) {
			res.writeHead(404).end('not under the ingress prefix');
			return;
		}
		const headers = { ...req.headers, 'x-ingress-path': prefix, host: t.host };
		const up = http.request({ host: t.hostname, port: t.port, method: req.method,
			path: req.url.slice(prefix.length) || '/', headers }, (ur) => {
			res.writeHead(ur.statusCode, ur.headers);
			ur.pipe(res);
		});
		up.on('error', () => res.destroy());
		req.pipe(up);
		res.on('close', () => up.destroy());
	});
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}
