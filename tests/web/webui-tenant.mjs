// tests/web/webui-tenant.mjs - the tenant's config patches, upgrades, state versions, etcd
// snapshots, credentials and deletion in Debian's chromium (playwright-core), checked with axe-core; run
// by tests/integration/webui-tenant.sh, which starts the daemon. Prints "ok - ...",
// "not ok - ..." and "# ..." lines; exits non-zero when something could not run at all.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { harness, apiAt, ingressProxy as proxyAt } from './lib.mjs';
import { tenantConsole } from './tenant-console.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const NEWPW = 'webui-admin-pw-2';
const T = 'tw1';
const PREFIX = '/api/hassio_ingress/Tn7-q';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);
const ingressProxy = (target) => proxyAt(target, PREFIX);




const t0 = Date.now();
const mark = (what) => console.log(`# ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(seconds, fn) {
	for (let i = 0; i < seconds * 4; i++) {
		if (await fn()) return true;
		await sleep(250);
	}
	return false;
}

async function login(page, user, pw) {
	await page.goto(BASE + '/');
	await page.fill('#username', user);
	await page.fill('#password', pw);
	await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
}

const submit = (page, sel) => Promise.all([page.waitForNavigation(), page.click(sel)]);


// Every URL the page names (links, forms, scripts, styles, SSE).
const urls = (page) => page.evaluate(() => {
	const out = [];
	for (const el of document.querySelectorAll('[href],[src],[action],[sse-connect]')) {
		for (const a of ['href', 'src', 'action', 'sse-connect']) {
			const v = el.getAttribute(a);
			if (v !== null && !v.startsWith('#')) out.push(v);
		}
	}
	return out;
});

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	const result = {};
	try {
		const ctx = await browser.newContext({ acceptDownloads: true });
		const page = await ctx.newPage();
		page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
		// the first login changes the one-time password
		await login(page, 'admin', process.env.WEBUI_OTP);
		await page.fill('#currentPassword', process.env.WEBUI_OTP);
		await page.fill('#newPassword', NEWPW);
		await page.fill('#confirmPassword', NEWPW);
		await submit(page, 'main button[type=submit]');
		ok(/Password changed/.test(await page.textContent('main')), 'the admin logs in and changes the one-time password');
		const tok = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW })).json.token;
		const idle = async () => {
			const r = await api('GET', `/api/v1/tenants/${T}/runs`, tok);
			return r.json && !r.json.items.some((x) => /Queued|Running|AwaitingApproval/.test(x.status?.phase || 'Queued'));
		};
		// a tenant with two machines, through the API (its forms are webui.sh's)
		await api('POST', '/api/v1/tenants', tok, { metadata: { name: T }, spec: { clusterProvider: 'sim', talosVersion: '1.11.5', kubernetesVersion: '1.34.1' } });
		await api('POST', `/api/v1/tenants/${T}/nodegroups`, tok, { metadata: { name: 'cp' }, spec: { role: 'controlplane', count: 1, providerClass: 'sim' } });
		await api('POST', `/api/v1/tenants/${T}/nodegroups`, tok, { metadata: { name: 'workers' }, spec: { role: 'worker', count: 1, providerClass: 'sim' } });
		const ready = await until(40, async () => (await api('GET', `/api/v1/tenants/${T}`, tok)).json?.status?.phase === 'Ready');
		ok(ready, `tenant ${T} (two machines) is Ready`);

		mark('tenant ready');
		// the machines' live rows: sent when what they show changes, not for a change of an
		// object the table does not show (a Machine's lastSeen, refreshed every 10
		// observations: 3 s here)
		await until(30, idle);
		const lastSeen = async () => ((await api('GET', `/api/v1/tenants/${T}/machines`, tok)).json?.items || []).map((m) => m.status?.lastSeen).join(' ');
		const seen0 = await lastSeen();
		const rowsSent = await page.evaluate(async (url) => {
			const stop = new AbortController();
			const timer = setTimeout(() => stop.abort(), 4500);
			let text = '';
			try {
				const r = await fetch(url, { signal: stop.signal });
				const rd = r.body.getReader();
				const dec = new TextDecoder();
				for (;;) {
					const { done, value } = await rd.read();
					if (done) break;
					text += dec.decode(value);
				}
			} catch (e) { /* the abort ends the read */ }
			clearTimeout(timer);
			return (text.match(/^event: rows$/gm) || []).length;
		}, `${BASE}/ui/live/tenants/${T}/machines`);
		const seen1 = await lastSeen();
		ok(seen0 !== seen1 && rowsSent === 1, 'the live machine rows are sent once, not again when only what they do not show changed (lastSeen moved)',
			`rows events: ${rowsSent}; lastSeen ${seen0} -> ${seen1}`);
		// 0. the tenant's console: overview, machine page, forms, live pages, runs
		await tenantConsole({ browser, page, api, tok, T, BASE, ok, audit, until, submit, shots: SHOTS });
		mark('console done');
		// 1. config patches: a YAML error at its line, then fixed, saved, effective per role
		await page.goto(`${BASE}/tenants/${T}/configpatches`);
		ok(/No config patches yet/.test(await page.textContent('main')), 'the config patches tab says what to do when there is none');
		await audit(page, 'configpatches-empty');
		await page.fill('#cp-name', 'tuning');
		const bad = 'machine:\n  sysctls:\n    net.core.somaxconn: "65535"\n  kubelet: extra: 1\n';
		await page.fill('#cp-patch', bad);
		await submit(page, '#patch-editor button[type=submit]');
		const line = await page.getAttribute('#cp-error-line', 'data-line').catch(() => null);
		const lineText = await page.textContent('#cp-error-line').catch(() => '');
		const errText = await page.textContent('#cp-patch-error').catch(() => '');
		ok(line === '4' && /kubelet: extra: 1/.test(lineText), 'a YAML error shows next to the editor at its line (4)', `line ${line}: ${lineText} / ${errText}`);
		ok(/Line 4, column \d+: .*mapping values are not allowed/.test(errText), 'with the API\'s message, line and column', errText);
		ok((await page.inputValue('#cp-patch')) === bad, 'the editor keeps the text as written');
		await audit(page, 'configpatch-yaml-error');
		await page.fill('#cp-patch', bad.replace('kubelet: extra: 1', 'kubelet: {extraArgs: {v: "2"}}'));
		await submit(page, '#patch-editor button[type=submit]');
		ok(page.url().endsWith(`/tenants/${T}/configpatches/tuning?toast=saved`) && /Saved\./.test(await page.textContent('[role=status]')),
			'the fixed patch is saved (toast)', page.url());
		const eff = async (role) => page.textContent(`#effective-${role}`).catch(() => '');
		ok(/# tuning[\s\S]*somaxconn/.test(await eff('controlplane')) && /somaxconn/.test(await eff('worker')),
			'the effective patch of both roles shows it', `${await eff('controlplane')} | ${await eff('worker')}`);
		await audit(page, 'configpatch-edit');
		await page.selectOption('#cp-role', 'worker');
		await submit(page, '#patch-editor button[type=submit]');
		ok(/No patch applies/.test(await page.textContent('#h-effective-controlplane + p')) && /somaxconn/.test(await eff('worker')),
			'edited to target workers only: the control plane\'s effective patch is empty, the workers\' has it');
		const stored = await api('GET', `/api/v1/tenants/${T}/configpatches/tuning`, tok);
		ok(stored.json?.spec?.targetRole === 'worker' && /extraArgs/.test(stored.json?.spec?.patch), 'the API holds the edited patch', JSON.stringify(stored.json?.spec));

		// the effective patch: the ordered list Talos applies, with the node groups a patch is limited to
		const ng = await api('POST', `/api/v1/tenants/${T}/configpatches`, tok, { apiVersion: 'rezuscloud.io/v1', kind: 'ConfigPatch', metadata: { name: 'zz-workers-only' },
			spec: { targetRole: 'worker', nodeGroups: ['workers'], patch: 'machine:\n  kubelet:\n    extraArgs:\n      v: "3"\n' } });
		ok(ng.code === 201, 'a patch limited to the node group workers is made through the API', JSON.stringify(ng.json));
		await page.goto(`${BASE}/tenants/${T}/configpatches/tuning`);
		const order = await page.locator('#effective-worker-order li').allTextContents();
		ok(order.length === 2 && /^tuning .*every node group/.test(order[0].trim()) && /^zz-workers-only .*only on the node groups workers/.test(order[1].trim()),
			'the workers\' effective patch lists both patches in the order they apply, the second limited to the node group workers', order.join(' | '));
		ok(/not one merged document[\s\S]*ordered list of patches[\s\S]*Talos applies one after another in that order/.test(await page.textContent('#effective-note')),
			'the page says the effective patch is the ordered list Talos applies in that order, not one merged document');
		ok(/# tuning[\s\S]*---\n# zz-workers-only/.test(await eff('worker')), 'and its YAML stream has them in that order');
		await audit(page, 'configpatch-effective-nodegroups');
		// deleting a patch: a confirmation naming the machines that lose it
		await page.goto(`${BASE}/tenants/${T}/configpatches/zz-workers-only`);
		await submit(page, '#delete-patch');
		const conf = await page.textContent('main');
		ok(/Delete the config patch zz-workers-only\?/.test(conf) && /It comes off the worker machines of the node groups workers/.test(conf) && !/These machines lose it/.test(conf),
			'deleting a patch first names it, its role and the node groups that lose it', conf.replace(/\s+/g, ' ').slice(0, 400));
		await audit(page, 'delete-configpatch');
		await submit(page, '#confirm-delete-patch button[type=submit]');
		ok(page.url().endsWith(`/tenants/${T}/configpatches?toast=patchdeleted`) && /Config patch deleted/.test(await page.textContent('[role=status]')),
			'the patch is deleted through the confirmation (toast)', page.url());
		ok((await api('GET', `/api/v1/tenants/${T}/configpatches/zz-workers-only`, tok)).code === 404 && !/zz-workers-only/.test(await page.textContent('main')),
			'and it is gone from the API and from the list');

		mark('patches done');
		// 2. upgrades: a dry run, then the upgrade with live progress
		ok(await until(40, idle), 'the patch\'s run ends');
		await page.goto(`${BASE}/tenants/${T}/upgrades`);
		ok(/No upgrades yet/.test(await page.textContent('main')), 'the upgrades tab says to start with a dry run');
		await audit(page, 'upgrades-empty');
		await page.selectOption('#up-component', 'talos');
		await page.fill('#up-target', '1.12.0');
		await submit(page, '#upgrade-form button[type=submit]');
		ok(/\/upgrades\/upgrade-[0-9a-f]+$/.test(page.url()), 'the dry run is created (its page says how it ends: no toast of its start)', page.url());
		const upgradePages = [new URL(page.url()).pathname];
		await page.evaluate(() => { window.__stayed = true; });
		let dry = false;
		try {
			await page.waitForFunction(() => /Succeeded/.test(document.querySelector('#upgrade-phase')?.textContent || ''), null, { timeout: 15000 });
			dry = true;
		} catch (e) { /* asserted */ }
		ok(dry && await page.evaluate(() => window.__stayed === true), 'the dry run succeeds on the page, live', await page.textContent('#upgrade-live'));
		const plan = await page.textContent('#upgrade-live tbody');
		ok(/cp-0\s*controlplane\s*v?1\.11\.5\s*v?1\.12\.0[\s\S]*workers-0\s*worker\s*v?1\.11\.5\s*v?1\.12\.0/.test(plan),
			'it shows what changes on each machine (1.11.5 to 1.12.0, control plane first)', plan);
		ok(/nothing was changed/.test(await page.textContent('#upgrade-message')), 'and that nothing was changed');
		await audit(page, 'upgrade-dry-run');
		await submit(page, '#start-upgrade button[type=submit]');
		ok(/\/upgrades\/upgrade-[0-9a-f]+\?toast=upgrade$/.test(page.url()), 'the real upgrade starts from the dry run\'s page', page.url());
		upgradePages.push(new URL(page.url()).pathname);
		ok(await page.locator('#cancel-upgrade').count() === 1, 'a running upgrade offers Cancel');
		await audit(page, 'upgrade-running');
		await page.evaluate(() => {
			window.__stayed = true;
			window.__seen = new Set();
			const note = () => {
				for (const td of document.querySelectorAll('#upgrade-live td.step')) window.__seen.add(td.textContent.trim());
				window.__seen.add('phase:' + (document.querySelector('#upgrade-phase')?.textContent || ''));
			};
			note();
			new MutationObserver(note).observe(document.querySelector('#upgrade-live'), { childList: true, subtree: true, characterData: true });
		});
		let done = false;
		try {
			await page.waitForFunction(() => /Succeeded|Failed|RolledBack/.test(document.querySelector('#upgrade-phase')?.textContent || ''), null, { timeout: 40000 });
			done = true;
		} catch (e) { /* asserted */ }
		const seen = await page.evaluate(() => [...window.__seen]);
		const phase = await page.textContent('#upgrade-phase');
		ok(done && phase === 'Succeeded', 'the upgrade succeeds', `${phase}: ${await page.textContent('#upgrade-live')}`);
		ok(seen.includes('phase:Upgrading') && seen.some((s) => !/^(phase:|Pending$|Succeeded$|Done$)/.test(s)) && await page.evaluate(() => window.__stayed === true),
			'its progress per machine arrived without a reload', seen.join(', '));
		ok(await page.locator('#cancel-upgrade').count() === 0, 'a finished upgrade offers no Cancel');
		console.log(`# steps seen live: ${seen.join(', ')}`);

		mark('upgrade done');
		// cancel: an upgrade canceled from its page
		ok(await until(30, idle), 'the runs after the upgrade end');
		await page.goto(`${BASE}/tenants/${T}/upgrades`);
		await page.selectOption('#up-component', 'kubernetes');
		await page.fill('#up-target', '1.35.0');
		await submit(page, '#upgrade-form button[type=submit]');
		await page.waitForFunction(() => /Succeeded/.test(document.querySelector('#upgrade-phase')?.textContent || ''), null, { timeout: 15000 }).catch(() => {});
		await submit(page, '#start-upgrade button[type=submit]');
		const canceled = page.url();
		await submit(page, '#cancel-upgrade button[type=submit]');
		ok(/toast=canceled$/.test(page.url()), 'Cancel goes through the API (toast)', page.url());
		const stopped = await until(15, async () => /Canceled|Succeeded/.test(await page.textContent('#upgrade-phase').catch(() => '')));
		const cphase = await page.textContent('#upgrade-phase').catch(() => '');
		const cname = canceled.match(/upgrades\/([^?]+)/)[1];
		ok(stopped, `the canceled upgrade stops, live (${cphase})`, JSON.stringify((await api('GET', `/api/v1/tenants/${T}/upgrades/${cname}`, tok)).json?.status));
		await page.goto(`${BASE}/tenants/${T}/upgrades`);
		ok((await page.locator('tbody tr').count()) >= 4, 'the upgrades tab lists the dry runs and upgrades');
		await audit(page, 'upgrades');
		// at phone width the Kind column gives way to a line under the name: it says which
		// rows are dry runs, as the API has them
		await page.setViewportSize({ width: 360, height: 740 });
		const ups = (await api('GET', `/api/v1/tenants/${T}/upgrades`, tok)).json?.items || [];
		const kinds = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#upgrade-rows tr[id^=upgrade-]')]
			.map((r) => [r.id.slice('upgrade-'.length), r.innerText.replace(/\s+/g, ' ')])));
		const wrongKind = ups.filter((u) => !new RegExp(`\\b${u.spec?.dryRun ? 'dry run' : 'upgrade'},`).test(kinds[u.metadata.name] || ''));
		ok(ups.length >= 4 && wrongKind.length === 0, 'at 360 px each upgrade\'s row says whether it is a dry run or an upgrade',
			wrongKind.map((u) => `${u.metadata.name} (dryRun ${u.spec?.dryRun}): ${kinds[u.metadata.name]}`).join('\n'));
		await page.setViewportSize({ width: 1280, height: 900 });

		mark('cancel done');
		// 3. state versions: admin only, rollback through a confirmation naming the version
		ok(await until(30, idle), 'the tenant is idle before the rollback');
		const cur = await fetch(`${BASE}/tfstate/${T}`, { headers: { Authorization: `Bearer ${tok}` } }).then((r) => r.json());
		cur.serial += 1;
		const wrote = await fetch(`${BASE}/tfstate/${T}`, { method: 'POST', headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' }, body: JSON.stringify(cur) });
		ok(wrote.status === 200, `a second state version is written through the TF http backend (${wrote.status})`);
		await page.goto(`${BASE}/tenants/${T}/state`);
		const versions = await page.locator('tbody tr[id^=version-]').count();
		ok(versions >= 2, `the state versions tab lists the versions (${versions})`);
		const byCells = await page.evaluate(() => [...document.querySelectorAll('tbody tr[id^=version-] td.version-by')].map((c) => `${c.querySelector('a')?.getAttribute('href') || ''} ${c.textContent.trim()}`));
		ok(byCells.some((c) => /^\/tenants\/[^/]+\/runs\/run-\S+ run-/.test(c)) && byCells.every((c) => !/run\/run-/.test(c)),
			'a version written by a run names the run (no "run/" prefix) and links to its page', byCells.join(' | '));
		await audit(page, 'state-versions');
		// the newest version before the current one: the same resources (the one written
		// above only bumped the serial). An older one may predate a node group (under load the
		// first run can start between the tenant's and its node groups' creation), and rolling
		// back to it takes machines away from the checks that follow.
		const link = page.locator('a[href*="/state/"][href$="/rollback"]').first();
		const href = await link.getAttribute('href');
		const v = href.match(/state\/(\d+)\/rollback/)[1];
		await submit(page, `a[href="${href}"]`);
		ok(new RegExp(`Roll the state back to version ${v}\\?`).test(await page.textContent('main')), `the confirmation names version ${v}`);
		const rbWhen = await page.textContent('#rollback-when');
		const rbSize = await page.textContent('#rollback-size');
		const rbList = await page.locator(`#version-${v} td[title$=" bytes"]`).count();
		ok(!/\d{4}-\d\d-\d\dT/.test(rbWhen) && /ago|UTC/.test(rbWhen) && /^\d+(\.\d)? (B|KiB|MiB)$/.test(rbSize.trim()) && !/bytes/.test(await page.textContent('main')) && !/ago ,/.test(await page.textContent('main')),
			'it says when the version was written as the list does (no raw ISO time), and its size as the list does (KiB, not bytes), no stray space before the comma', `${rbWhen} / ${rbSize} (${rbList})`);
		await audit(page, 'state-rollback-confirm');
		const before = (await api('GET', `/api/v1/tenants/${T}/state`, tok)).json.items[0].version;
		await submit(page, 'main form button[type=submit]');
		ok(page.url().endsWith(`/tenants/${T}/state?toast=rolledback`) && /rolled back/.test(await page.textContent('[role=status]')), 'the rollback is done (toast)', page.url());
		const after = (await api('GET', `/api/v1/tenants/${T}/state`, tok)).json.items;
		ok(after[0].version === before + 1, `a new current version (${after[0].version}) is made from version ${v}`, JSON.stringify(after.slice(0, 2)));

		mark('rollback done');
		// 3b. etcd snapshots: Snapshot now, the rows live and newest first, a failed one's
		// message escaped; a restore through a confirmation naming the snapshot, a dry run
		// first by default, its steps live; the restore itself refused on a healthy control
		// plane at its precheck
		await page.goto(`${BASE}/tenants/${T}/etcdbackups`);
		ok(/No snapshots yet\. Snapshot now takes one/.test(await page.textContent('#etcdbackup-rows')) && /No restores yet/.test(await page.textContent('main')),
			'the etcd snapshots tab says what to do when there is none', await page.textContent('main'));
		await audit(page, 'etcdbackups-empty');
		await submit(page, '#snapshot-now button[type=submit]');
		ok(page.url().endsWith(`/tenants/${T}/etcdbackups?toast=snapshot`) && /Snapshot asked for/.test(await page.textContent('[role=status]')),
			'Snapshot now asks for one (toast)', page.url());
		const phaseOf = (n) => page.evaluate((id) => document.querySelector(`#etcdbackup-${id} .phase`)?.textContent || '', n);
		const snaps = async () => ((await api('GET', `/api/v1/tenants/${T}/etcdbackups`, tok)).json?.items || []);
		const first = (await snaps())[0]?.metadata?.name || 'none';
		const snapStored = await page.waitForFunction((id) => /Succeeded/.test(document.querySelector(`#etcdbackup-${id} .phase`)?.textContent || ''), first, { timeout: 20000 }).then(() => true, () => false);
		const fb = (await api('GET', `/api/v1/tenants/${T}/etcdbackups/${first}`, tok)).json;
		const human = (n) => (n < 1024 ? `${n} B` : n < 10189 ? `${(n / 1024).toFixed(1)} KiB` : `${Math.round(n / 1024)} KiB`);
		const row1 = (await page.textContent(`#etcdbackup-${first}`).catch(() => '')).replace(/\s+/g, ' ').trim();
		ok(snapStored && fb?.status?.size > 0 && new RegExp(`^${first} Succeeded ${human(fb.status.size)} ${fb.status.talosVersion} ${fb.status.kubernetesVersion} \\d+ (s|min) ago manual Restore…`).test(row1) &&
			await page.getAttribute(`#etcdbackup-${first} time`, 'datetime') === fb.metadata.creationTimestamp,
			`it shows Succeeded with its size in human units (${human(fb?.status?.size)}), versions, time and trigger`, `${row1} / ${JSON.stringify(fb?.status)}`);
		await page.evaluate(() => { window.__stayed = true; });
		const second = (await api('POST', `/api/v1/tenants/${T}/etcdbackups`, tok, { metadata: {}, spec: { trigger: 'manual' } })).json?.metadata?.name || 'none';
		const arrived = await page.waitForFunction((id) => /Succeeded/.test(document.querySelector(`#etcdbackup-${id} .phase`)?.textContent || ''), second, { timeout: 20000 }).then(() => true, () => false);
		const snapOrder = await page.evaluate(() => [...document.querySelectorAll('#etcdbackup-rows tr[id^=etcdbackup-]')].map((r) => r.id.slice('etcdbackup-'.length)));
		ok(arrived && await page.evaluate(() => window.__stayed === true) && snapOrder.join(' ') === `${second} ${first}`,
			'a snapshot asked for elsewhere arrives live, Succeeded, above the older one', `${snapOrder.join(' ')}; ${await phaseOf(second)}`);
		// a failed snapshot shows its message, as text
		const third = (await api('POST', `/api/v1/tenants/${T}/etcdbackups`, tok, { metadata: {}, spec: { trigger: 'manual' } })).json?.metadata?.name || 'none';
		await until(20, async () => /Succeeded|Failed|Skipped/.test((await api('GET', `/api/v1/tenants/${T}/etcdbackups/${third}`, tok)).json?.status?.phase || ''));
		const probe = '<img src=x id=xss-probe> & "quoted"';
		const failed = await fetch(`${BASE}/api/v1/tenants/${T}/etcdbackups/${third}/status`, { method: 'PATCH', headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/merge-patch+json' },
			body: JSON.stringify({ status: { phase: 'Failed', message: probe } }) });
		const shownFailed = await page.waitForFunction((id) => /Failed/.test(document.querySelector(`#etcdbackup-${id} .phase`)?.textContent || ''), third, { timeout: 10000 }).then(() => true, () => false);
		const row3 = await page.textContent(`#etcdbackup-${third}`).catch(() => '');
		ok(failed.status === 200 && shownFailed && row3.includes(probe) && await page.locator('#xss-probe').count() === 0 && await page.locator(`#etcdbackup-${third} a.restore`).count() === 0,
			'a failed snapshot shows its message live, as text (no element made of it), and offers no restore', `${failed.status} ${row3}`);
		await page.reload();
		ok((await page.textContent(`#etcdbackup-${third}`)).includes(probe) && await page.locator('#xss-probe').count() === 0, 'and so on the page as served');
		const r409 = await page.goto(`${BASE}/tenants/${T}/etcdbackups/${third}/restore`);
		ok(r409.status() === 409 && /Only a Succeeded snapshot can be restored/.test(await page.textContent('main')), `a failed snapshot's restore page says it cannot be restored (${r409.status()})`);
		await page.goto(`${BASE}/tenants/${T}/etcdbackups`);
		await audit(page, 'etcdbackups');
		// a restore: the confirmation names the snapshot, a dry run is the default
		await submit(page, `#etcdbackup-${first} a.restore`);
		const cm = (await page.textContent('main')).replace(/\s+/g, ' ');
		ok(new RegExp(`Restore the etcd of ${T} from the snapshot ${first}\\?`).test(cm) && cm.includes(`${fb.status.startedAt.slice(0, 10)} ${fb.status.startedAt.slice(11, 19)} UTC`) &&
			cm.includes(`${human(fb.status.size)} (${fb.status.size} bytes)`) && cm.includes(`Talos${fb.status.talosVersion}`) && cm.includes(`Kubernetes${fb.status.kubernetesVersion}`),
			'the restore\'s confirmation names the snapshot: name, time, size, versions', cm.slice(0, 600));
		ok(/replaces the data of the tenant's etcd/.test(cm) && /for a tenant whose control plane is lost/.test(cm) && await page.isChecked('#restore-dry-run'),
			'it says what a restore replaces and what it is for, and a dry run is checked');
		await audit(page, 'etcd-restore-confirm');
		// the values sit next to their labels, not half the page away; the time in brackets
		// has no space before its bracket
		const dlGap = await page.evaluate(() => {
			const dl = document.querySelector('#restore-snapshot');
			const right = Math.max(...[...dl.querySelectorAll('dt')].map((d) => { const r = document.createRange(); r.selectNodeContents(d); return r.getBoundingClientRect().right; }));
			return Math.round(dl.querySelector('dd').getBoundingClientRect().left - right);
		});
		ok(dlGap <= 24, `the snapshot's values are beside their labels (${dlGap} px between the widest label and the values)`);
		const paren = cm.match(/UTC \(([^)]*)\)/)?.[1];
		ok(paren !== undefined && paren.length > 0 && paren === paren.trim(), 'the time it was taken reads "(N s ago)", no stray space inside the brackets', `(${paren})`);
		await submit(page, '#confirm-restore button[type=submit]');
		const drytoast = await page.textContent('[role=status]').catch(() => '');
		ok(/\/etcdrestores\/restore-[0-9a-f]+\?toast=restore-dry$/.test(page.url()) && /Dry run started/.test(drytoast) && !/Restore started/.test(drytoast),
			'the dry run is created, and its message says a dry run started, not a restore', `${page.url()}: ${drytoast}`);
		const etcdPages = [new URL(page.url()).pathname];
		const restoreOver = () => page.waitForFunction(() => /Succeeded|Failed/.test(document.querySelector('#restore-phase')?.textContent || ''), null, { timeout: 20000 }).then(() => true, () => false);
		const steps = async () => (await page.textContent('#etcdrestore-live tbody').catch(() => '')).replace(/\s+/g, ' ').trim();
		const dryOver = await restoreOver();
		ok(dryOver && await page.textContent('#restore-phase') === 'Succeeded' &&
			/^Precheck Succeeded .*Download Succeeded .*Verify Succeeded .*as recorded Restore Skipped dry run Wait until healthy Skipped dry run$/.test(await steps()),
			'the dry run\'s steps show on its page: checked, downloaded, verified; the restore skipped', await steps());
		ok(new RegExp(`^dry run: would restore ${T}/${first}\\.etcd\\.sealed`).test(await page.textContent('#restore-message').catch(() => '')) && await page.locator('#restore-for-real').count() === 1,
			'it says what the restore would do, and offers the restore itself', await page.textContent('#restore-message').catch(() => ''));
		await audit(page, 'etcd-restore-dry-run');
		// at phone width what a step did has the width of the screen, not a sliver beside the
		// other columns (a path or a sum broken every few characters)
		await page.setViewportSize({ width: 360, height: 740 });
		const did = await page.evaluate(() => Math.round(document.querySelector('#restore-step-Verify td:last-child')?.getBoundingClientRect().width || 0));
		ok(did >= 280, `at 360 px what the Verify step did is ${did} px wide`);
		await page.setViewportSize({ width: 1280, height: 900 });
		// the restore itself, dry run unchecked: refused at its precheck, the control plane being healthy
		await submit(page, '#restore-for-real');
		await page.uncheck('#restore-dry-run');
		await submit(page, '#confirm-restore button[type=submit]');
		etcdPages.push(new URL(page.url()).pathname);
		const realOver = await restoreOver();
		ok(realOver && await page.textContent('#restore-phase') === 'Failed' && /^Precheck Failed the control plane is healthy/.test(await steps()) &&
			/^Restore restore-/.test(await page.textContent('main h2')),
			'the restore itself (dry run unchecked) fails at its precheck on a healthy control plane, saying why', await steps());
		await page.goto(`${BASE}/tenants/${T}/etcdbackups`);
		const rrows = await page.evaluate(() => [...document.querySelectorAll('tr[id^=etcdrestore-]')].map((r) => r.textContent.replace(/\s+/g, ' ').trim()));
		ok(rrows.length === 2 && /^restore-\S+ \S+ restore Failed/.test(rrows[0]) && new RegExp(`^restore-\\S+ ${first} dry run Succeeded`).test(rrows[1]),
			'the tab lists both restores, newest first, with their snapshot, kind and phase', rrows.join('\n'));

		mark('etcd snapshots done');
		// 4. credentials: a file, never in the page
		await page.goto(`${BASE}/tenants/${T}/credentials`);
		await audit(page, 'credentials');
		const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download-kubeconfig')]);
		const file = await dl.path();
		const kc = fs.readFileSync(file, 'utf8');
		ok(/^apiVersion: v1\nkind: Config\n/.test(kc) && /clusters:/.test(kc) && new RegExp(`current-context: admin@${T}`).test(kc),
			'the kubeconfig downloads as a file and is a kubeconfig', kc.slice(0, 200));
		ok(dl.suggestedFilename() === `${T}-kubeconfig.yaml`, 'named after the tenant', dl.suggestedFilename());
		result.secret = (kc.match(/token: (\S+)/) || [])[1] || '';
		ok(result.secret.length > 8 && !(await page.content()).includes(result.secret), 'its token is not in the page');
		const [dl2] = await Promise.all([page.waitForEvent('download'), page.click('#download-talosconfig')]);
		ok(/^context: /.test(fs.readFileSync(await dl2.path(), 'utf8')), 'the talosconfig downloads too');

		// view and edit users: no state versions, no rollback; a viewer gets no credentials
		for (const [user, role] of [['viewer', 'view'], ['editor', 'edit']]) {
			await api('POST', '/api/v1/users', tok, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: user }, spec: { role, password: `${user}-pw-123456` } });
			const uctx = await browser.newContext();
			const up = await uctx.newPage();
			await login(up, user, `${user}-pw-123456`);
			await up.goto(`${BASE}/tenants/${T}`);
			const nav = await up.textContent('nav[aria-label=Tenant]');
			ok(!/State versions/.test(nav), `a ${role} user has no State versions tab`, nav);
			const r1 = await up.goto(`${BASE}/tenants/${T}/state`);
			const r2 = await up.goto(`${BASE}/tenants/${T}/state/1/rollback`);
			ok(r1.status() === 403 && r2.status() === 403 && await up.locator('a[href$="/rollback"], form[action$="/rollback"]').count() === 0,
				`and is refused the state pages and offered no rollback (${r1.status()}, ${r2.status()})`);
			const csrf = await up.getAttribute('meta[name=csrf-token]', 'content');
			const post = (url) => up.evaluate(async (b) => (await fetch(b.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'csrf=' + b.csrf + '&dryRun=true' })).status, { url, csrf });
			// etcd snapshots: the tab, no Restore (an admin's); Snapshot now for an editor only
			await up.goto(`${BASE}/tenants/${T}/etcdbackups`);
			const nSnaps = (await snaps()).length;
			const snapNow = await up.locator('#snapshot-now').count();
			const listed = await up.locator(`#etcdbackup-${first}`).count();
			const restores = await up.locator('a.restore, a[href$="/restore"], form[action$="/restore"]').count();
			const rc = await up.goto(`${BASE}/tenants/${T}/etcdbackups/${first}/restore`);
			const fr = await post(`/tenants/${T}/etcdbackups/${first}/restore`);
			ok(/etcd snapshots/.test(nav) && listed === 1 && snapNow === (role === 'edit' ? 1 : 0) && restores === 0 && rc.status() === 403 && fr === 403 &&
				(await api('GET', `/api/v1/tenants/${T}/etcdrestores`, tok)).json.items.length === 2,
				`a ${role} user sees the snapshots, ${role === 'edit' ? 'with' : 'without'} Snapshot now, offered no restore and refused it (${rc.status()}, forged post ${fr})`);
			if (role === 'view') {
				await up.goto(`${BASE}/tenants/${T}/etcdbackups`);
				ok(await up.locator('form[method=post]:not([action$="/logout"])').count() === 0, 'a view user has no form on the etcd snapshots tab');
				await audit(up, 'etcdbackups-view');
				const fs1 = await post(`/tenants/${T}/etcdbackups`);
				ok(fs1 === 403 && (await snaps()).length === nSnaps, `a view user's forged Snapshot now is refused by the API (${fs1}) and takes none`);
				await up.goto(BASE + etcdPages[0]);
				ok(await up.locator('#restore-for-real').count() === 0 && /Succeeded/.test(await up.textContent('#restore-phase')), 'a view user sees a restore\'s steps, with no control');
			}
			const forced = await up.evaluate(async (b) => (await fetch(b.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'csrf=' + b.csrf })).status,
				{ url: `/tenants/${T}/state/1/rollback`, csrf });
			ok(forced === 403, `a ${role} user's rollback post is refused by the API (${forced})`);
			if (role === 'edit') {
				await up.goto(`${BASE}/tenants/${T}/configpatches/tuning`);
				const hasLink = await up.locator('#delete-patch').count();
				await up.goto(`${BASE}/tenants/${T}/configpatches/tuning/delete`);
				ok(hasLink === 1 && await up.locator('#confirm-delete-patch').count() === 1, 'an edit user is offered a patch\'s deletion');
			}
			if (role === 'view') {
				const r3 = await up.goto(`${BASE}/tenants/${T}/credentials/kubeconfig`);
				ok(r3.status() === 403 && !/kind: Config/.test(await up.content()), `a view user gets no kubeconfig (${r3.status()})`);
				await up.goto(`${BASE}/tenants/${T}`);
				ok(await up.locator('#delete-tenant').count() === 0, 'nor a Delete control');
				await up.goto(`${BASE}/tenants/${T}/configpatches`);
				ok(await up.locator('form[method=post]:not([action$="/logout"])').count() === 0, 'nor a patch editor');
				await audit(up, 'configpatches-view');
				const dr = await up.goto(`${BASE}/tenants/${T}/configpatches/tuning/delete`);
				ok(dr.status() === 200 && await up.locator('form[method=post]:not([action$="/logout"])').count() === 0 && await up.locator('#delete-patch').count() === 0,
					`a view user sees no control to delete a patch (${dr.status()})`);
				const fdel = await up.evaluate(async (b) => (await fetch(b.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'csrf=' + b.csrf })).status,
					{ url: `/tenants/${T}/configpatches/tuning/delete`, csrf });
				ok(fdel === 403 && (await api('GET', `/api/v1/tenants/${T}/configpatches/tuning`, tok)).code === 200,
					`a view user's forged delete post is refused by the API (${fdel}) and the patch stays`);
				await up.goto(`${BASE}/tenants/${T}/upgrades`);
				ok(await up.locator('form[method=post]:not([action$="/logout"])').count() === 0, 'nor an upgrade form');
				// a dry run's page (Start for an editor) and a finished upgrade's (no Cancel),
				// and the state versions page
				const where = [];
				for (const p of [...upgradePages, `/tenants/${T}/state`]) {
					await up.goto(BASE + p);
					const n = await up.locator('form[method=post]:not([action$="/logout"])').count();
					if (n > 0) where.push(`${p}: ${n}`);
				}
				ok(where.length === 0 && upgradePages.length === 2,
					`nor a mutating control on an upgrade's pages (${upgradePages.length}) or the state versions page`, where.join(', '));
			}
			await uctx.close();
		}

		mark('roles done');
		// every page of the tabs behind a Home Assistant style ingress: URLs under the prefix,
		// framing allowed; a dry run (live) and a patch saved through the proxy
		const proxy = await ingressProxy(BASE);
		const IBASE = `http://127.0.0.1:${proxy.address().port}${PREFIX}`;
		const ictx = await browser.newContext({ acceptDownloads: true });
		const ip = await ictx.newPage();
		ip.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
		await ip.goto(IBASE + '/');
		await ip.fill('#username', 'admin');
		await ip.fill('#password', NEWPW);
		await submit(ip, 'main button[type=submit]');
		ok(new URL(ip.url()).pathname === PREFIX + '/', 'ingress: the admin logs in through the proxy', ip.url());
		await ip.goto(`${IBASE}/tenants/${T}/upgrades`);
		await ip.selectOption('#up-component', 'talos');
		await ip.fill('#up-target', '1.12.1');
		await submit(ip, '#upgrade-form button[type=submit]');
		ok(ip.url().startsWith(`${IBASE}/tenants/${T}/upgrades/upgrade-`) && /\/upgrades\/upgrade-[0-9a-f]+$/.test(ip.url()), 'ingress: a dry run is created, redirected under the prefix', ip.url());
		const iup = new URL(ip.url()).pathname.slice(PREFIX.length);
		const ilive = await ip.waitForFunction(() => /Succeeded/.test(document.querySelector('#upgrade-phase')?.textContent || ''), null, { timeout: 15000 }).then(() => true, () => false);
		ok(ilive, 'ingress: its result arrives live through the proxy (SSE under the prefix)', await ip.textContent('#upgrade-live').catch(() => ''));
		await audit(ip, 'upgrade-dry-run-ingress');
		await ip.goto(`${IBASE}/tenants/${T}/configpatches/tuning`);
		await submit(ip, '#patch-editor button[type=submit]');
		ok(ip.url() === `${IBASE}/tenants/${T}/configpatches/tuning?toast=saved`, 'ingress: a patch is saved, redirected under the prefix', ip.url());
		await audit(ip, 'configpatch-edit-ingress');
		const sv = (await api('GET', `/api/v1/tenants/${T}/state`, tok)).json.items.at(-1).version;
		const ibad = [];
		const ipages = ['/configpatches', '/configpatches/tuning', '/configpatches/tuning/delete', '/upgrades', iup.replace(`/tenants/${T}`, ''),
			'/state', `/state/${sv}/rollback`, '/credentials', '/delete', '/etcdbackups', `/etcdbackups/${first}/restore`,
			...etcdPages.map((p) => p.replace(`/tenants/${T}`, ''))];
		for (const p of ipages) {
			const r = await ip.goto(`${IBASE}/tenants/${T}${p}`);
			const h = r.headers();
			if (r.status() !== 200) ibad.push(`${p}: HTTP ${r.status()}`);
			if (/frame-ancestors/.test(h['content-security-policy'] || '') || h['x-frame-options']) ibad.push(`${p}: framing refused (${h['content-security-policy']}, ${h['x-frame-options']})`);
			for (const u of await urls(ip)) {
				if (!u.startsWith(PREFIX + '/')) ibad.push(`${p}: ${u}`);
			}
		}
		ok(ibad.length === 0, `ingress: on the ${ipages.length} tab pages every link, form, asset and SSE URL carries the prefix, and framing is allowed`, ibad.slice(0, 10).join('\n'));
		const [idl] = await Promise.all([ip.waitForEvent('download'), ip.goto(`${IBASE}/tenants/${T}/credentials`).then(() => ip.click('#download-kubeconfig'))]);
		ok(/^apiVersion: v1\nkind: Config\n/.test(fs.readFileSync(await idl.path(), 'utf8')), 'ingress: the kubeconfig downloads through the proxy');
		await ictx.close();
		proxy.close();
		ok(await until(30, idle), 'the runs after the ingress pass end');
		mark('ingress done');
		// htmx requests carry the page's CSRF token (web/static/csrf.js): a UI POST sent by
		// htmx.ajax is accepted, and the same POST with the header taken off is refused
		await page.goto(`${BASE}/tenants/${T}/nodegroups`);
		const hxPost = (url, values, strip) => page.evaluate((b) => new Promise((resolve) => {
			const cfg = (e) => {
				if (b.strip) delete e.detail.headers['X-CSRF-Token'];
				window.__hxToken = e.detail.headers['X-CSRF-Token'] || '';
			};
			const stop = setTimeout(() => resolve({ status: 0, url: '', token: 'no request ended within 15 s' }), 15000);
			document.addEventListener('htmx:configRequest', cfg);
			document.addEventListener('htmx:afterRequest', (e) => {
				clearTimeout(stop);
				document.removeEventListener('htmx:configRequest', cfg);
				resolve({ status: e.detail.xhr.status, url: e.detail.xhr.responseURL, token: window.__hxToken });
			}, { once: true });
			htmx.ajax('POST', b.url, { values: b.values, swap: 'none' });
		}), { url, values, strip });
		const meta = await page.getAttribute('meta[name=csrf-token]', 'content');
		const hxOk = await hxPost(`/tenants/${T}/nodegroups/workers/scale`, { count: '1' }, false);
		ok(hxOk.status === 200 && /\/nodegroups\?toast=scaled$/.test(hxOk.url) && hxOk.token === meta && meta.length === 64,
			`an htmx POST carries X-CSRF-Token from the page's meta and is accepted (${hxOk.status})`, JSON.stringify(hxOk));
		const hxBare = await hxPost(`/tenants/${T}/nodegroups/workers/scale`, { count: '1' }, true);
		ok(hxBare.status === 403 && hxBare.token === '', `the same htmx POST without the header is refused (${hxBare.status})`, JSON.stringify(hxBare));

		// scaling down: a confirmation naming the machines that go; Cancel changes nothing
		const workers = async () => (await api('GET', `/api/v1/tenants/${T}/nodegroups/workers`, tok)).json?.metadata;
		const wBefore = await workers();
		const scaleDown = async () => {
			await page.goto(`${BASE}/tenants/${T}/nodegroups`);
			await page.fill('#scale-workers', '0');
			await submit(page, '#nodegroup-workers button[type=submit]');
		};
		await scaleDown();
		const sc = (await page.textContent('main')).replace(/\s+/g, ' ');
		ok(/Scale the node group workers down from 1 to 0 machines\?/.test(sc) && /destroys 1 machine, with everything on it: workers-0 \(worker, \w+\)/.test(sc) && !/cp-0/.test(sc),
			'scaling down first names the machine that goes (workers-0, not cp-0)', sc.slice(0, 400));
		await audit(page, 'scale-down-confirm');
		await submit(page, '#confirm-scale a');
		const wCanceled = await workers();
		ok(new URL(page.url()).pathname === `/tenants/${T}/nodegroups` && wCanceled?.generation === wBefore?.generation &&
			(await api('GET', `/api/v1/tenants/${T}/nodegroups/workers`, tok)).json?.spec?.count === 1,
			'Cancel goes back to the node groups and changes nothing (count 1, same generation)', `${page.url()} ${JSON.stringify(wCanceled)}`);
		await scaleDown();
		await submit(page, '#confirm-scale button[type=submit]');
		ok(page.url().endsWith(`/tenants/${T}/nodegroups?toast=scaleddown-approve`) && (await api('GET', `/api/v1/tenants/${T}/nodegroups/workers`, tok)).json?.spec?.count === 0,
			'Confirm scales the node group down (toast, count 0)', page.url());
		const sdt = (await page.textContent('[role=status]').catch(() => '')).trim();
		ok(/its run waits for someone to approve its plan before it destroys machines/.test(sdt) && !/a run applies the change/.test(sdt),
			'and its message says the run waits for approval, not "a run applies the change"', sdt);
		// its plan destroys a machine: it waits for approval (tofu.destroy_approval), given here
		const approved = await until(20, async () => {
			const r = (await api('GET', `/api/v1/tenants/${T}/runs`, tok)).json?.items?.find((x) => x.status?.phase === 'AwaitingApproval');
			return r !== undefined && (await api('POST', `/api/v1/tenants/${T}/runs/${r.metadata.name}/approve`, tok, {})).code === 200;
		});
		const scaled = approved && await until(30, async () => {
			const m = (await api('GET', `/api/v1/tenants/${T}/machines`, tok)).json?.items || [];
			return await idle() && m.length === 1 && m[0].metadata.name === 'cp-0';
		});
		ok(scaled, `and its run, approved (${approved}), destroys workers-0, only it`, JSON.stringify((await api('GET', `/api/v1/tenants/${T}/machines`, tok)).json?.items?.map((m) => m.metadata.name)));
		mark('scale-down done');
		// 5. deleting the tenant through its confirmation
		await page.goto(`${BASE}/tenants/${T}`);
		await submit(page, '#delete-tenant');
		const main = await page.textContent('main');
		ok(new RegExp(`Delete the tenant ${T}\\?`).test(main) && /its 1 machine,/.test(main) && /cp \(controlplane, 1 wanted\)/.test(main) && /workers \(worker, 0 wanted\)/.test(main),
			'the confirmation names the tenant, its node groups and machine count', main.slice(0, 400));
		await audit(page, 'delete-tenant');
		await submit(page, 'main form button[type=submit]');
		ok(new URL(page.url()).pathname === '/tenants' && /Tenant deletion started/.test(await page.textContent('[role=status]')),
			'deleting redirects to the tenants with a toast', page.url());
		const gone = await until(40, async () => (await api('GET', `/api/v1/tenants/${T}`, tok)).code === 404);
		ok(gone, 'and the tenant is gone once its destroy run is done');
		await ctx.close();
	} finally {
		await browser.close();
	}
	console.log(`# pages checked with axe: ${audited()}`);
	if (result.secret) console.log(`SECRET ${result.secret}`);
	return failures();
}

main().then(() => process.exit(0), (e) => {
	console.log(`not ok - the browser run stopped: ${String(e).split('\n')[0]}`);
	console.error(e);
	process.exit(1);
});
