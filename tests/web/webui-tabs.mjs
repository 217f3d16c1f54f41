// tests/web/webui-tabs.mjs - a tenant's edit pages and the other tabs' actions in Debian's
// chromium (playwright-core), checked with axe-core; run by tests/integration/webui-tenant.sh
// after webui-tenant.mjs, against the same daemon, with a tenant of its own: editing a
// tenant's spec and labels and a node group's labels, provider config and runner selector
// (what was typed kept on an error, each problem beside its field with a summary linking to
// it, in plain words); a config patch's format, enabled flag and node groups; a failed
// downgrade dry run said as a failure; the upgrades and restores lists live; a state
// version's download and a held lock's force-unlock (an admin's); badges and relative times.
// Prints "ok - ...", "not ok - ..." and "# ..." lines; exits non-zero when something could
// not run at all.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { harness, apiAt } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const NEWPW = 'webui-admin-pw-2'; // webui-tenant.mjs sets it; a run of this script alone too
const T = process.env.TABS_TENANT || 'tabs1';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);

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
const submit = (page, sel) => Promise.all([page.waitForNavigation(), page.click(sel)]).then(([r]) => r);
const text = async (page, sel) => ((await page.textContent(sel).catch(() => '')) || '').replace(/\s+/g, ' ').trim();

// Also at 375 px, the narrowest phone the issue names (audit() takes 360 and 1280).
async function shot375(page, name) {
	await page.setViewportSize({ width: 375, height: 800 });
	await page.screenshot({ path: path.join(SHOTS, `${name}-375.png`), fullPage: true, timeout: 30000 }).catch((e) => console.log(`# ${name}-375: ${e.message.split('\n')[0]}`));
	await page.setViewportSize({ width: 1280, height: 900 });
}
async function look(page, name) {
	await audit(page, name);
	await shot375(page, name);
}

// Logs in as the admin: with NEWPW once webui-tenant.mjs changed the one-time password, else
// with it, changing it to NEWPW.
async function loginAdmin(page) {
	await page.goto(BASE + '/login');
	await page.fill('#username', 'admin');
	await page.fill('#password', NEWPW);
	await submit(page, 'main button[type=submit]');
	if (!/\/login/.test(page.url())) return;
	await page.fill('#username', 'admin');
	await page.fill('#password', process.env.WEBUI_OTP);
	await submit(page, 'main button[type=submit]');
	await page.fill('#currentPassword', process.env.WEBUI_OTP);
	await page.fill('#newPassword', NEWPW);
	await page.fill('#confirmPassword', NEWPW);
	await submit(page, 'main button[type=submit]');
}

// A part of the script: an exception (a control that is not there, on a page without the
// feature) fails it and the next part runs.
async function part(name, fn) {
	try {
		await fn();
	} catch (e) {
		ok(false, `${name} ran to its end`, String(e.message || e).split('\n').slice(0, 3).join('\n'));
	}
}

// What a page must not say: the API's words for a whole request.
const jargon = /details\.causes|is invalid:|UpgradeRun ""|spec\.[a-zA-Z]/;

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		const ctx = await browser.newContext({ acceptDownloads: true });
		const page = await ctx.newPage();
		page.setDefaultTimeout(8000);
		page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
		await loginAdmin(page);
		const tok = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW })).json?.token;
		ok(!!tok, 'the admin logs in');
		const get = async (p) => (await api('GET', p, tok)).json;
		const idle = async () => {
			const r = await get(`/api/v1/tenants/${T}/runs`);
			return r && !r.items.some((x) => /Queued|Running|AwaitingApproval/.test(x.status?.phase || 'Queued'));
		};
		await api('POST', '/api/v1/tenants', tok, { metadata: { name: T, labels: { team: 'a' } }, spec: { clusterProvider: 'sim', talosVersion: '1.11.5', kubernetesVersion: '1.34.1' } });
		await api('POST', `/api/v1/tenants/${T}/nodegroups`, tok, { metadata: { name: 'cp' }, spec: { role: 'controlplane', count: 1, providerClass: 'sim' } });
		await api('POST', `/api/v1/tenants/${T}/nodegroups`, tok, { metadata: { name: 'workers' }, spec: { role: 'worker', count: 1, providerClass: 'sim' } });

		await api('POST', '/api/v1/users', tok, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'tabsview' }, spec: { role: 'view', password: 'tabsview-pw-123456' } });
		await api('POST', '/api/v1/users', tok, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'tabsedit' }, spec: { role: 'edit', password: 'tabsedit-pw-123456' } });
		let viewer = null;
		// 1. editing the tenant: a local problem, then the API's, then saved
		await part('editing the tenant', async () => {
			await page.goto(`${BASE}/tenants/${T}`);
			await page.click('#link-edit-tenant');
			await page.waitForURL(/\/edit$/).catch(() => {});
			ok(new URL(page.url()).pathname === `/tenants/${T}/edit`, 'the overview links to the edit page', page.url());
			await page.goto(`${BASE}/tenants/${T}/nodegroups`);
			await page.click('#link-edit-nodegroup-workers');
			await page.waitForURL(/\/edit$/).catch(() => {});
			ok(new URL(page.url()).pathname === `/tenants/${T}/nodegroups/workers/edit`, 'each node group links to its edit page', page.url());
			const r0 = await page.goto(`${BASE}/tenants/${T}/edit`);
			ok(r0.status() === 200 && await page.locator('#edit-tenant').count() === 1, `the tenant has an edit page (${r0.status()})`);
			ok(await page.inputValue('#f-kubernetesVersion').catch(() => '') === '1.34.1' && /team=a/.test(await page.inputValue('#f-labels').catch(() => '')),
				'it shows the spec and labels as they are');
			await look(page, 'edit-tenant');
			await page.fill('#f-labels', 'team=b\nno-value-here');
			await page.fill('#f-controlPlaneEndpoint', 'https://k8s.example.com:6443');
			await page.fill('#f-etcdKeep', '7');
			const e1 = await submit(page, '#edit-tenant button[type=submit]');
			ok(e1?.status() === 422 && /no-value-here.*key=value/.test(await text(page, '#f-labels-error')),
				'a label that is not key=value is refused beside the labels', `${e1?.status()} ${await text(page, '#f-labels-error')}`);
			ok(await page.inputValue('#f-labels') === 'team=b\nno-value-here' && await page.inputValue('#f-controlPlaneEndpoint') === 'https://k8s.example.com:6443' &&
				await page.inputValue('#f-etcdKeep') === '7', 'and every field keeps what was typed');
			ok(await page.locator('#form-problems a[href="#f-labels"]').count() === 1, 'a summary above the form links to the field');
			await page.fill('#f-labels', 'team=b\nenv=prod');
			await page.fill('#f-kubernetesVersion', '1.34');
			await page.fill('#f-controlPlaneEndpoint', 'k8s example');
			const e2 = await submit(page, '#edit-tenant button[type=submit]');
			const kErr = await text(page, '#f-kubernetesVersion-error');
			const uErr = await text(page, '#f-controlPlaneEndpoint-error');
			const sum = await text(page, '#form-problems');
			ok(e2?.status() === 422 && /version such as/.test(kErr) && uErr.length > 0, 'the API\'s refusals go beside their fields', `${e2?.status()} ${kErr} / ${uErr}`);
			ok(await page.locator('#form-problems a[href="#f-kubernetesVersion"]').count() === 1 && await page.locator('#form-problems a[href="#f-controlPlaneEndpoint"]').count() === 1,
				'the summary links to both fields', sum);
			ok(!jargon.test(await text(page, 'main')), 'in plain words: no "details.causes", "is invalid", API field paths', (await text(page, 'main')).match(jargon)?.[0]);
			ok(await page.inputValue('#f-labels') === 'team=b\nenv=prod' && await page.inputValue('#f-kubernetesVersion') === '1.34', 'the form keeps what was typed after the API\'s refusal');
			await look(page, 'edit-tenant-errors');
			await page.fill('#f-kubernetesVersion', '1.34.1');
			await page.fill('#f-controlPlaneEndpoint', 'https://k8s.example.com:6443');
			await submit(page, '#edit-tenant button[type=submit]');
			const t1 = await get(`/api/v1/tenants/${T}`);
			ok(/toast=tenantsaved/.test(page.url()) && /Tenant saved/.test(await text(page, '[role=status]')), 'the fixed form is saved (toast)', page.url());
			ok(JSON.stringify(t1?.metadata?.labels) === '{"team":"b","env":"prod"}' && t1?.spec?.controlPlaneEndpoint === 'https://k8s.example.com:6443' &&
				t1?.spec?.etcdBackup?.keep === 7, 'the API holds the new labels (team=a replaced), endpoint and snapshots kept', JSON.stringify({ l: t1?.metadata?.labels, s: t1?.spec }));
			// a stale form: someone changed the tenant's spec meanwhile (the daemon's status
			// writes, all the time while it provisions, do not count)
			await page.goto(`${BASE}/tenants/${T}/edit`);
			await fetch(`${BASE}/api/v1/tenants/${T}`, { method: 'PATCH', headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { etcdBackup: { keep: 3 } } }) });
			await page.fill('#f-labels', 'team=c');
			const e3 = await submit(page, '#edit-tenant button[type=submit]');
			ok(e3?.status() === 409 && /Someone changed this while you edited it/.test(await text(page, '#form-problems')) && (await get(`/api/v1/tenants/${T}`))?.metadata?.labels?.team === 'b',
				'a form of a tenant changed meanwhile is refused (409), saying so, and overwrites nothing', `${e3?.status()} ${await text(page, '#form-problems')}`);

		});
		mark('tenant edited');
		// 2. editing a node group
		await part('editing a node group', async () => {
			const r1 = await page.goto(`${BASE}/tenants/${T}/nodegroups/workers/edit`);
			ok(r1.status() === 200 && await page.locator('#edit-nodegroup').count() === 1, `a node group has an edit page (${r1.status()})`);
			await look(page, 'edit-nodegroup');
			await page.fill('#f-labels', 'disk=ssd');
			await page.fill('#f-providerConfig', 'notReadyAfter: 5000\nbad: [1, 2\n');
			await page.fill('#f-runnerSelector', 'zone=a');
			const g1 = await submit(page, '#edit-nodegroup button[type=submit]');
			const pErr = await text(page, '#f-providerConfig-error');
			ok(g1?.status() === 422 && /^Line \d+, column \d+: /.test(pErr) && !/at line/.test(pErr),
				'provider config that is not YAML is refused beside it, its line and column said once', pErr);
			ok(await page.inputValue('#f-providerConfig') === 'notReadyAfter: 5000\nbad: [1, 2\n' && await page.inputValue('#f-labels') === 'disk=ssd' &&
				await page.inputValue('#f-runnerSelector') === 'zone=a', 'the form keeps what was typed');
			await page.fill('#f-providerConfig', '- a\n- b\n');
			await submit(page, '#edit-nodegroup button[type=submit]');
			ok(/not a list/.test(await text(page, '#f-providerConfig-error')), 'a list is refused: the settings are key: value', await text(page, '#f-providerConfig-error'));
			await page.fill('#f-providerConfig', '{"notReadyAfter": 5000, "bogus": 1}');
			const g2 = await submit(page, '#edit-nodegroup button[type=submit]');
			ok(g2?.status() === 422 && /bogus/.test(await text(page, '#f-providerConfig-error')) && !jargon.test(await text(page, 'main')),
				'a setting the plugin does not know is refused beside the provider config (JSON is taken too), in plain words', await text(page, '#f-providerConfig-error'));
			await look(page, 'edit-nodegroup-errors');
			await page.fill('#f-providerConfig', 'notReadyAfter: 5000\n');
			await submit(page, '#edit-nodegroup button[type=submit]');
			const ng = await get(`/api/v1/tenants/${T}/nodegroups/workers`);
			ok(/toast=groupsaved/.test(page.url()) && JSON.stringify(ng?.spec?.labels) === '{"disk":"ssd"}' && ng?.spec?.providerConfig?.notReadyAfter === 5000 &&
				JSON.stringify(ng?.spec?.runnerSelector) === '{"zone":"a"}', 'the node group is saved: labels, provider config, runner selector', JSON.stringify(ng?.spec));
			ok(/notReadyAfter/.test(await page.inputValue('#f-providerConfig')), 'its page shows the provider config as saved');
			await page.fill('#f-runnerSelector', '');
			await submit(page, '#edit-nodegroup button[type=submit]');
			ok((await get(`/api/v1/tenants/${T}/nodegroups/workers`))?.spec?.runnerSelector === undefined, 'an emptied runner selector is removed');
			viewer = await browser.newContext();
			const vp = await viewer.newPage();
			await vp.goto(BASE + '/login');
			await vp.fill('#username', 'tabsview');
			await vp.fill('#password', 'tabsview-pw-123456');
			await submit(vp, 'main button[type=submit]');
			const v1 = await vp.goto(`${BASE}/tenants/${T}/edit`);
			const v2 = await vp.goto(`${BASE}/tenants/${T}/nodegroups/workers/edit`);
			ok(v1.status() === 403 && v2.status() === 403, `a view user gets no edit form (${v1.status()}, ${v2.status()})`);

		});
		mark('node group edited');
		// the tabs' header is live too: a run started through the API shows on the config
		// patches tab without a reload
		await part('a tab\'s live header', async () => {
			await page.goto(`${BASE}/tenants/${T}/configpatches`);
			await page.evaluate(() => { window.__stayed = true; });
			const before = await text(page, '#tenant-head');
			const run = (await api('POST', `/api/v1/tenants/${T}/runs`, tok, { spec: { operation: 'apply' } })).json?.metadata?.name;
			const t0 = Date.now();
			const seen = await page.waitForFunction((n) => (document.querySelector('#tenant-head')?.textContent || '').includes(n), run, { timeout: 15000 }).then(() => true, () => false);
			ok(seen && await page.evaluate(() => window.__stayed === true),
				`the header of a tab follows the tenant live (the run ${run} shown after ${Date.now() - t0} ms, no reload)`, `${before} -> ${await text(page, '#tenant-head')}`);
			for (let i = 0; i < 60 && !(await idle()); i++) await page.waitForTimeout(250);
		});
		// 3. config patches: format, enabled, node groups
		await part('config patches', async () => {
			await page.goto(`${BASE}/tenants/${T}/configpatches`);
			await page.fill('#cp-name', 'kubelet-v');
			await page.selectOption('#cp-role', 'worker');
			await page.selectOption('#cp-format', 'json6902').catch(() => {});
			await page.uncheck('#cp-enabled').catch(() => {});
			await page.check('#cp-ng-workers').catch(() => {});
			await page.fill('#cp-patch', '- op: add\n  path: /machine/kubelet/extraArgs\n  value: {v: "2"}\n');
			await submit(page, '#patch-editor button[type=submit]');
			const cp = await get(`/api/v1/tenants/${T}/configpatches/kubelet-v`);
			ok(cp?.spec?.format === 'json6902' && cp?.spec?.enabled === false && JSON.stringify(cp?.spec?.nodeGroups) === '["workers"]',
				'a patch is made with its format, disabled, limited to a node group', JSON.stringify(cp?.spec));
			const row = await text(page, '#patch-kubelet-v');
			ok(/^kubelet-v Disabled worker workers json6902$/.test(row) && await page.locator('#patch-kubelet-v .enabled .badge').count() === 1,
				'the table shows it with a Disabled badge, its node groups and format', row);
			ok(await page.isChecked('#cp-ng-workers') && !(await page.isChecked('#cp-enabled')) && await page.inputValue('#cp-format') === 'json6902',
				'the editor shows them as saved');
			await look(page, 'configpatch-fields');
			await page.check('#cp-enabled');
			await page.uncheck('#cp-ng-workers');
			await submit(page, '#patch-editor button[type=submit]');
			const cp2 = await get(`/api/v1/tenants/${T}/configpatches/kubelet-v`);
			ok(cp2?.spec?.enabled === true && (cp2?.spec?.nodeGroups || []).length === 0 && /Enabled worker every node group/.test(await text(page, '#patch-kubelet-v')),
				'enabled again and on every node group', JSON.stringify(cp2?.spec));
			await page.fill('#cp-patch', 'machine:\n  kubelet: extra: 1\n');
			await submit(page, '#patch-editor button[type=submit]');
			ok(await page.locator('#form-problems a[href="#cp-patch"]').count() === 1 && !/at line/.test(await text(page, '#cp-patch-error')),
				'a YAML error: a summary links to the editor, the place said once', await text(page, '#cp-patch-error'));
			// the table is live, the patch being edited still marked; what was typed stays
			await page.evaluate(() => { window.__stayed = true; });
			const tp = Date.now();
			await api('POST', `/api/v1/tenants/${T}/configpatches`, tok, { metadata: { name: 'live-p' }, spec: { targetRole: 'all', patch: 'machine: {}\n' } });
			const pseen = await page.waitForSelector('#patch-live-p .badge', { timeout: 2000 }).then(() => true, () => false);
			ok(pseen && await page.evaluate(() => window.__stayed === true) && await page.locator('#patch-kubelet-v a[aria-current=page]').count() === 1 &&
				/extra: 1/.test(await page.inputValue('#cp-patch')),
				`a patch made through the API appears in the table within 2 s, no reload, the one edited still marked, the editor as typed (${Date.now() - tp} ms)`);
			const eseen2 = await page.waitForSelector('#effective-live li[data-patch="live-p"]', { timeout: 2000 }).then(() => true, () => false);
			ok(eseen2 && await page.evaluate(() => window.__stayed === true), 'and in the effective patch per role, no reload');
			await api('DELETE', `/api/v1/tenants/${T}/configpatches/live-p`, tok);

		});
		mark('patches done');
		// 4. upgrades: a downgrade dry run is a failure, said so; the list is live
		await part('upgrades', async () => {
			ok(await until(60, async () => (await get(`/api/v1/tenants/${T}`))?.status?.phase === 'Ready'), `tenant ${T} is Ready`);
			await page.goto(`${BASE}/tenants/${T}/upgrades`);
			await page.selectOption('#up-component', 'talos');
			await page.fill('#up-target', '1.10.0');
			await submit(page, '#upgrade-form button[type=submit]');
			const outcome = await page.waitForFunction(() => document.querySelector('#upgrade-outcome')?.getAttribute('data-outcome'), null, { timeout: 15000 }).then((h) => h.jsonValue(), () => '');
			const status = await text(page, '[role=status]');
			ok(outcome === 'failed' && /found a problem/.test(await text(page, '#upgrade-outcome')) && /no downgrade/.test(await text(page, '#upgrade-message')),
				'a downgrade dry run says what it found, as a failure', `${outcome}: ${await text(page, '#upgrade-live')}`);
			ok(!/Created/.test(status) && await page.locator('[role=status] .text-ok').count() === 0, 'with no green "Created."', status);
			ok(await page.locator('#upgrade-phase.badge-bad').count() === 1 && await page.locator('#upgrade-prechecks .badge-bad').count() >= 1,
				'its phase and failed precheck are red badges');
			ok(/ago$|^in /.test(await text(page, '#upgrade-live time')), 'its time is relative', await text(page, '#upgrade-live time'));
			const checks = await page.evaluate(() => [...document.querySelectorAll('#upgrade-prechecks li')].map((l) => l.textContent.replace(/\s+/g, ' ').trim()));
			ok(checks.length > 0 && checks.every((c) => !/[a-z][A-Z]/.test(c.split(' ').slice(1, 4).join(' '))), 'the prechecks are named in words, not identifiers (OneMinorAtATime)', checks.join(' | '));
			const failedChecks = checks.filter((c) => /^Failed /.test(c));
			const said = await text(page, '#upgrade-message');
			ok(failedChecks.length < 2 || failedChecks.every((c) => said.includes(c.slice(-20))),
				`the outcome names every precheck that failed (${failedChecks.length})`, `${said} / ${failedChecks.join(' | ')}`);
			const steps = await page.evaluate(() => [...document.querySelectorAll('#upgrade-live tbody td.step')].map((t) => t.textContent.trim()));
			ok(steps.every((st) => !/Pending/.test(st)), 'an upgrade that will not go ahead has no step still Pending', steps.join(' | '));
			await look(page, 'upgrade-dry-run-failed');
			await page.goto(`${BASE}/tenants/${T}/upgrades`);
			await page.fill('#up-target', 'one.two');
			const u2 = await submit(page, '#upgrade-form button[type=submit]');
			ok(u2?.status() === 422 && (await text(page, '#up-target-error')).length > 0 && await page.locator('#form-problems a[href="#up-target"]').count() === 1 &&
				!jargon.test(await text(page, 'main')) && await page.inputValue('#up-target') === 'one.two',
				'a target that is no version is refused beside it, in plain words, kept', `${u2?.status()} ${await text(page, '#form-problems')} ${await text(page, '#up-target-error')}`);
			await page.goto(`${BASE}/tenants/${T}/upgrades`);
			await page.evaluate(() => { window.__stayed = true; });
			const made = await api('POST', `/api/v1/tenants/${T}/upgrades`, tok, { apiVersion: 'rezuscloud.io/v1', kind: 'UpgradeRun', metadata: {}, spec: { component: 'talos', targetVersion: '1.12.0', dryRun: true } });
			const uname = made.json?.metadata?.name || 'none';
			const t2 = Date.now();
			const seen = await page.waitForSelector(`#upgrade-${uname} .badge`, { timeout: 2000 }).then(() => true, () => false);
			ok(seen && await page.evaluate(() => window.__stayed === true), `an upgrade made through the API appears in the list within 2 s, no reload (${Date.now() - t2} ms)`);
			const done = await page.waitForFunction((n) => /Succeeded/.test(document.querySelector(`#upgrade-${n} .phase`)?.textContent || ''), uname, { timeout: 15000 }).then(() => true, () => false);
			ok(done && await page.locator(`#upgrade-${uname} .badge-ok`).count() === 1, 'and its phase follows live, as a badge');
			const order = await page.evaluate(() => [...document.querySelectorAll('#upgrade-rows tr[id^=upgrade-]')].map((r) => r.id));
			ok(order[0] === `upgrade-${uname}`, 'newest first', order.join(' '));
			await look(page, 'upgrades-live');
			// the tab's header follows the tenant on the same stream
			await page.fill('#up-target', '1.13');
			const hrun = (await api('POST', `/api/v1/tenants/${T}/runs`, tok, { spec: { operation: 'apply' } })).json?.metadata?.name || 'none';
			const hseen = await page.waitForFunction((n) => (document.querySelector('#tenant-head')?.textContent || '').includes(n), hrun, { timeout: 15000 }).then(() => true, () => false);
			ok(hseen && await page.evaluate(() => window.__stayed === true) && await page.inputValue('#up-target') === '1.13',
				`the upgrades tab's header follows the tenant live (run ${hrun}), the form as typed`);
			for (let i = 0; i < 60 && !(await idle()); i++) await page.waitForTimeout(250);

		});
		mark('upgrades done');
		// 5. state versions: download, force-unlock
		await part('state versions', async () => {
			ok(await until(60, idle), 'the tenant\'s runs end');
			await page.goto(`${BASE}/tenants/${T}/state`);
			ok(await page.locator('#state-lock .badge-ok').count() === 1, 'the state page says the state is unlocked');
			const cur = (await get(`/api/v1/tenants/${T}/state`))?.items?.[0];
			const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click(`#version-${cur?.version} a.download`)]).catch(() => [null]);
			const body = dl ? fs.readFileSync(await dl.path(), 'utf8') : '';
			ok(dl && dl.suggestedFilename() === `${T}-state-v${cur.version}.json` && JSON.parse(body || '{}').lineage === cur.lineage,
				`an admin downloads state version ${cur?.version} as a file`, dl ? dl.suggestedFilename() : 'no download');
			ok(/ago$/.test(await text(page, `#version-${cur?.version} time`)) && await page.locator(`#version-${cur?.version} .badge-ok`).count() === 1,
				'the current version has a badge, its time is relative');
			const lockInfo = { ID: 'tabs-lock-1', Operation: 'OperationTypeApply', Who: 'ci@crashed-host', Version: '1.9.0', Created: new Date().toISOString(), Path: '', Info: '' };
			const lk = await fetch(`${BASE}/tfstate/${T}`, { method: 'LOCK', headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' }, body: JSON.stringify(lockInfo) });
			await page.goto(`${BASE}/tenants/${T}/state`);
			ok(lk.status === 200 && /Locked by ci@crashed-host \(apply\)/.test(await text(page, '#state-lock')) && await page.locator('#force-unlock').count() === 1,
				'a held lock shows with its holder and a Force-unlock', `${lk.status} ${await text(page, '#state-lock')}`);
			await look(page, 'state-locked');
			await submit(page, '#force-unlock');
			ok(/Force-unlock the state of/.test(await text(page, 'main h2')) && /ci@crashed-host/.test(await text(page, '#unlock-holder')), 'the confirmation names the holder');
			await look(page, 'state-unlock-confirm');
			// editors: no download, no unlock
			const ectx = await browser.newContext();
			const ep = await ectx.newPage();
			await ep.goto(BASE + '/login');
			await ep.fill('#username', 'tabsedit');
			await ep.fill('#password', 'tabsedit-pw-123456');
			await submit(ep, 'main button[type=submit]');
			const d1 = await ep.goto(`${BASE}/tenants/${T}/state/${cur?.version}/download`);
			const d2 = await ep.goto(`${BASE}/tenants/${T}/state/unlock`);
			const ecsrf = await ep.getAttribute('meta[name=csrf-token]', 'content').catch(() => '');
			const fu = await ep.evaluate(async (b) => (await fetch(b.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'csrf=' + b.csrf })).status, { url: `/tenants/${T}/state/unlock`, csrf: ecsrf });
			const etok = (await api('POST', '/api/v1/auth/login', null, { username: 'tabsedit', password: 'tabsedit-pw-123456' })).json?.token;
			const d3 = await api('GET', `/api/v1/tenants/${T}/state/${cur?.version}`, etok);
			ok(d1.status() === 403 && d2.status() === 403 && fu === 403 && d3.code === 403 && (await get(`/api/v1/tenants/${T}/state`))?.lock?.id === 'tabs-lock-1',
				`an edit user can neither download a version nor force-unlock (${d1.status()}, ${d2.status()}, post ${fu}, API ${d3.code}); the lock stays`);
			await ectx.close();
			await submit(page, '#confirm-unlock button[type=submit]');
			ok(/toast=unlocked/.test(page.url()) && /State unlocked/.test(await text(page, '[role=status]')) && (await get(`/api/v1/tenants/${T}/state`))?.lock === undefined,
				'the admin force-unlocks it (toast), the API says it is free', page.url());

		});
		mark('state done');
		// 6. etcd restores live, badges; credentials; access bindings' form
		await part('etcd, credentials, bindings', async () => {
			const snap = (await api('POST', `/api/v1/tenants/${T}/etcdbackups`, tok, { metadata: {}, spec: { trigger: 'manual' } })).json?.metadata?.name;
			await until(20, async () => (await get(`/api/v1/tenants/${T}/etcdbackups/${snap}`))?.status?.phase === 'Succeeded');
			await page.goto(`${BASE}/tenants/${T}/etcdbackups`);
			ok(await page.locator(`#etcdbackup-${snap} .phase.badge-ok`).count() === 1 && /ago$/.test(await text(page, `#etcdbackup-${snap} time`)),
				'a snapshot\'s phase is a badge, its time relative', await text(page, `#etcdbackup-${snap}`));
			await page.evaluate(() => { window.__stayed = true; });
			const rs = (await api('POST', `/api/v1/tenants/${T}/etcdrestores`, tok, { metadata: {}, spec: { backup: snap, dryRun: true } })).json?.metadata?.name || 'none';
			const t3 = Date.now();
			const rseen = await page.waitForSelector(`#etcdrestore-${rs} .badge`, { timeout: 2000 }).then(() => true, () => false);
			ok(rseen && await page.evaluate(() => window.__stayed === true), `a restore made through the API appears in the restores within 2 s, no reload (${Date.now() - t3} ms)`);
			await page.waitForFunction((n) => /Succeeded|Failed/.test(document.querySelector(`#etcdrestore-${n}`)?.textContent || ''), rs, { timeout: 20000 }).catch(() => {});
			const erun = (await api('POST', `/api/v1/tenants/${T}/runs`, tok, { spec: { operation: 'apply' } })).json?.metadata?.name || 'none';
			const eseen = await page.waitForFunction((n) => (document.querySelector('#tenant-head')?.textContent || '').includes(n), erun, { timeout: 15000 }).then(() => true, () => false);
			ok(eseen && await page.evaluate(() => window.__stayed === true), `the etcd tab's header follows the tenant live (run ${erun}), no reload`);
			for (let i = 0; i < 60 && !(await idle()); i++) await page.waitForTimeout(250);
			await look(page, 'etcdbackups-badges');
			await page.goto(`${BASE}/tenants/${T}/etcdrestores/${rs}`);
			ok(await page.locator('#restore-phase.badge').count() === 1 && await page.locator('#etcdrestore-live td.step .badge').count() >= 3, 'a restore\'s phase and steps are badges');
			await look(page, 'etcd-restore-badges');
			// the credentials come with the first apply: a new tenant's page says so when it comes
			const T2 = `${T}-creds`;
			await api('POST', '/api/v1/tenants', tok, { metadata: { name: T2 }, spec: { clusterProvider: 'sim' } });
			await page.goto(`${BASE}/tenants/${T2}/credentials`);
			const before2 = await text(page, '#credentials-state');
			await page.evaluate(() => { window.__stayed = true; });
			const applied = await page.waitForFunction(() => /Available/.test(document.querySelector('#credentials-state')?.textContent || ''), null, { timeout: 30000 }).then(() => true, () => false);
			ok(/Not yet/.test(before2) && applied && await page.evaluate(() => window.__stayed === true),
				'a new tenant\'s credentials say "Not yet", then "Available" once its first apply is done, no reload', `${before2} -> ${await text(page, '#credentials-state')}`);
			await api('DELETE', `/api/v1/tenants/${T2}`, tok);
			await page.goto(`${BASE}/tenants/${T}/credentials`);
			ok(/Available from the last apply, .*ago/.test(await text(page, '#credentials-state')), 'the credentials say they are there, since when', await text(page, '#credentials-state'));
			await look(page, 'credentials-badge');
			await page.goto(`${BASE}/access`);
			await page.fill('#b-name', 'tabs-b1');
			await page.fill('#b-users', 'tabsview');
			await submit(page, '#create-binding button[type=submit]');
			ok(await page.locator('#form-problems a[href="#b-tenant-names"]').count() === 1 && !jargon.test(await text(page, 'main')),
				'an access binding of no tenant: a summary links to the tenants, in plain words', await text(page, '#form-problems'));
			await page.fill('#b-tenant-names', T);
			await submit(page, '#create-binding button[type=submit]');
			ok(/ago$/.test(await text(page, '#binding-tabs-b1 time')), 'a binding\'s time is relative', await text(page, '#binding-tabs-b1'));
			await look(page, 'bindings-badges');
			await api('DELETE', '/api/v1/accessbindings/tabs-b1', tok);
			await viewer?.close();
			await api('DELETE', `/api/v1/tenants/${T}`, tok);
		});
		mark('done');
	} finally {
		await browser.close();
	}
	console.log(`# ${audited()} pages audited; ${failures()} failures`);
}

main().catch((e) => {
	console.log(`not ok - the browser script ran to its end\n# ${String(e.stack || e).split('\n').slice(0, 8).join('\n# ')}`);
	process.exitCode = 1;
});
