// tests/web/webui.mjs - the WebUI in Debian's chromium, driven by playwright-core, checked with
// axe-core; run by tests/integration/webui.sh, which starts the daemon. Prints "ok - ...",
// "not ok - ..." and "# ..." lines; exits non-zero when something could not run at all.
import { createRequire } from 'node:module';
import path from 'node:path';
import { harness, apiAt, ingressProxy as proxyAt } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const PREFIX = '/api/hassio_ingress/Tk3n-x';
const NEWPW = 'webui-admin-pw-1';
const VIEWPW = 'webui-viewer-pw-1';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);
const ingressProxy = (target) => proxyAt(target, PREFIX);





async function login(page, base, user, pw) {
	await page.goto(base + '/');
	await page.fill('#username', user);
	await page.fill('#password', pw);
	await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
}

// Every URL the page names (links, forms, scripts, styles, SSE) under base's path.
async function urls(page) {
	return page.evaluate(() => {
		const out = [];
		for (const el of document.querySelectorAll('[href],[src],[action],[sse-connect]')) {
			for (const a of ['href', 'src', 'action', 'sse-connect']) {
				const v = el.getAttribute(a);
				if (v !== null && !v.startsWith('#')) out.push(v);
			}
		}
		return out;
	});
}

async function flow(browser, base, label, tenant) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
	const sfx = label ? `-${label}` : '';

	await login(page, base, 'admin', NEWPW);
	ok(new URL(page.url()).pathname === new URL(base).pathname.replace(/\/$/, '') + '/', `${label || 'direct'}: logged in, on the dashboard`, page.url());
	await page.goto(base + '/tenants');
	await page.fill('#t-name', tenant);
	await Promise.all([page.waitForNavigation(), page.click('#create-tenant button[type=submit]')]);
	ok(page.url().endsWith(`/tenants/${tenant}?toast=created`), `${label || 'direct'}: a tenant is created through the form`, page.url());
	ok(/Created\./.test(await page.textContent('[role=status]')), `${label || 'direct'}: a toast says so`);
	await audit(page, `tenant-overview${sfx}`);

	await page.goto(`${base}/tenants/${tenant}/nodegroups`);
	await page.fill('#ng-name', 'cp');
	await page.fill('#ng-count', 'many');
	await Promise.all([page.waitForNavigation(), page.click('#add-nodegroup button[type=submit]')]);
	const err = (await page.textContent('#ng-count-error')).trim();
	ok(err.length > 0, `${label || 'direct'}: a 422's cause shows next to the field it names ("${err}")`);
	await audit(page, `nodegroup-invalid${sfx}`);
	await page.fill('#ng-count', '1');
	await Promise.all([page.waitForNavigation(), page.click('#add-nodegroup button[type=submit]')]);
	ok(page.url().includes(`/tenants/${tenant}/nodegroups?toast=created`), `${label || 'direct'}: a node group is added through the form`, page.url());
	await audit(page, `nodegroups${sfx}`);

	// the run's page: its log arrives live
	await page.goto(`${base}/tenants/${tenant}/runs`);
	await audit(page, `runs${sfx}`);
	const heads = await page.locator('thead th').allTextContents();
	const runnerCell = await page.locator('tbody tr').first().locator('td').nth(heads.indexOf('Runner')).textContent().catch(() => '');
	ok(heads.includes('Runner') && runnerCell.trim() === '-',
		`${label || 'direct'}: the runs tab has a Runner column, - for the daemon's own pool`, `${heads.join('|')}: ${runnerCell}`);
	const runLink = page.locator('tbody a').first();
	await Promise.all([page.waitForNavigation(), runLink.click()]);
	const runRunner = await page.textContent('#run-runner').catch(() => '');
	ok(runRunner.trim() === '-', `${label || 'direct'}: the run page names its runner (-: the daemon's own pool)`, runRunner);
	await page.evaluate(() => { window.__stayed = true; });
	try {
		await page.waitForFunction(() => /Succeeded|Failed/.test(document.querySelector('#run-log-end')?.textContent || ''), null, { timeout: 30000 });
	} catch (e) { /* asserted below */ }
	const log = await page.textContent('#run-log');
	ok(/Apply complete!|No changes\.|Plan:/.test(log), `${label || 'direct'}: the run's log streams into the page`, log.slice(0, 300));
	ok(await page.evaluate(() => window.__stayed === true), `${label || 'direct'}: without a reload`);
	await audit(page, `run${sfx}`);

	// machines reach Running live
	await page.goto(`${base}/tenants/${tenant}/machines`);
	await page.evaluate(() => { window.__stayed = true; });
	let running = false;
	try {
		await page.waitForFunction(() => /Running/.test(document.querySelector('#machine-rows')?.textContent || ''), null, { timeout: 30000 });
		running = true;
	} catch (e) { /* asserted */ }
	ok(running && await page.evaluate(() => window.__stayed === true), `${label || 'direct'}: the machine reaches Running on the page without a reload`, await page.textContent('#machine-rows'));
	await audit(page, `machines${sfx}`);

	// scale to 2, then 2 machines Running live (not repeated under the ingress: time)
	if (!label) {
		await page.goto(`${base}/tenants/${tenant}/nodegroups`);
		await page.fill('#scale-cp', '2');
		await Promise.all([page.waitForNavigation(), page.click('#nodegroup-cp button[type=submit]')]);
		ok(page.url().includes('toast=scaled'), `${label || 'direct'}: the node group is scaled through its form`, page.url());
		await page.goto(`${base}/tenants/${tenant}/machines`);
		let two = false;
		try {
			await page.waitForFunction(() => (document.querySelector('#machine-rows')?.textContent.match(/Running/g) || []).length >= 2, null, { timeout: 40000 });
			two = true;
		} catch (e) { /* asserted */ }
		ok(two, `${label || 'direct'}: and its second machine reaches Running live`, await page.textContent('#machine-rows'));
	}

	if (!label) {
		// scaling down destroys a machine: with tofu.destroy_approval the run waits, the
		// page lists what the plan deletes, and approving it applies
		await page.goto(`${base}/tenants/${tenant}/nodegroups`);
		await page.fill('#scale-cp', '1');
		await Promise.all([page.waitForNavigation(), page.click('#nodegroup-cp button[type=submit]')]);
		await Promise.all([page.waitForNavigation(), page.click('#confirm-scale button[type=submit]')]);
		let awaiting = false;
		for (let i = 0; i < 60 && !awaiting; i++) {
			await page.goto(`${base}/tenants/${tenant}/runs`);
			const first = page.locator('tbody tr').first();
			awaiting = /AwaitingApproval/.test(await first.textContent());
			if (!awaiting) await page.waitForTimeout(250);
		}
		ok(awaiting, 'direct: scaling down waits for approval of its destroying plan');
		await Promise.all([page.waitForNavigation(), page.locator('tbody a').first().click()]);
		const plan = await page.textContent('#h-plan + p, main ul');
		ok(/delete[\s\S]*cp\[1\]|cp\[1\][\s\S]*delete/.test(await page.textContent('main')),
			'direct: the run page lists the resource the plan deletes', plan);
		await audit(page, 'run-approval');
		await page.fill('#reason', 'scale down after the test');
		await Promise.all([page.waitForNavigation(), page.click('main form[action$="/approve"] button')]);
		ok(page.url().includes('toast=approved'), 'direct: the plan is approved through its form', page.url());
		let applied = false;
		try {
			await page.waitForFunction(() => /Succeeded/.test(document.querySelector('#run-log-end')?.textContent || ''), null, { timeout: 30000 });
			applied = true;
		} catch (e) { /* asserted */ }
		ok(applied, 'direct: and the approved run applies, its end arriving live', await page.textContent('#run-log-end'));
	}
	await page.goto(`${base}/tenants/${tenant}/nodegroups/cp/delete`);
	ok(/destroys its [12] machines/.test(await page.textContent('main')) && /cp-0/.test(await page.textContent('main')),
		`${label || 'direct'}: deleting a node group first names the machines it destroys`);
	await audit(page, `delete-nodegroup${sfx}`);
	await page.goto(base + '/');
	await audit(page, `dashboard${sfx}`);
	await page.goto(base + '/tenants');
	await audit(page, `tenants${sfx}`);
	return { ctx, page };
}

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		// first login: the one-time password must be changed
		const ctx = await browser.newContext();
		const page = await ctx.newPage();
		await page.goto(BASE + '/');
		ok(new URL(page.url()).pathname === '/login', 'a visitor is sent to the login page', page.url());
		const resp = await page.goto(BASE + '/login');
		const h = resp.headers();
		ok(/frame-ancestors 'none'/.test(h['content-security-policy'] || ''), 'pages say frame-ancestors \'none\' outside the ingress', h['content-security-policy']);
		await audit(page, 'login');
		// the keyboard alone: Tab goes from the skip link through the fields to the button,
		// every stop shows where the focus is, and Enter sends the form
		const stops = [];
		let unseen = '';
		for (let i = 0; i < 12 && !stops.includes('submit'); i++) {
			await page.keyboard.press('Tab');
			const f = await page.evaluate(() => {
				const e = document.activeElement;
				const cs = getComputedStyle(e);
				return { id: e.id || (e.type === 'submit' ? 'submit' : e.textContent.trim().slice(0, 20)),
					// an outline that is drawn (width, not transparent) or a ring shadow
					ring: (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0 &&
						!/rgba\(.*, 0\)$|transparent/.test(cs.outlineColor)) || cs.boxShadow !== 'none',
					how: `${cs.outlineStyle} ${cs.outlineWidth} ${cs.outlineColor} / ${cs.boxShadow}` };
			});
			stops.push(f.id);
			if (!f.ring) unseen += `${f.id} (${f.how}) `;
		}
		ok(stops[0] === 'Skip to the content' && stops.indexOf('username') < stops.indexOf('password') &&
			stops.indexOf('password') < stops.indexOf('submit') && stops.indexOf('username') >= 0,
			'Tab reaches the skip link first, then the user name, the password and the button', stops.join(' > '));
		ok(unseen === '', 'every focused control shows a focus ring', unseen);
		await page.focus('#username');
		await page.keyboard.type('admin');
		await page.keyboard.press('Tab');
		await page.keyboard.type('not-the-password');
		await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
		ok(/not correct/.test(await page.textContent('main')), 'a wrong password typed and sent with Enter is refused with a message');
		await page.fill('#username', 'admin');
		await page.fill('#password', process.env.WEBUI_OTP);
		await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
		ok(new URL(page.url()).pathname === '/password', 'the one-time password leads to the password change', page.url());
		const cookies = await ctx.cookies();
		const sess = cookies.find((c) => c.name === 'rezus_session');
		ok(sess && sess.httpOnly && sess.sameSite === 'Lax' && sess.path === '/' && !sess.secure,
			'the session cookie is HttpOnly, SameSite=Lax, Path=/ (not Secure over plain HTTP)', JSON.stringify(sess));
		await page.goto(BASE + '/tenants');
		ok(new URL(page.url()).pathname === '/password', 'no other page before the password is changed', page.url());
		await audit(page, 'password');
		await page.fill('#currentPassword', process.env.WEBUI_OTP);
		await page.fill('#newPassword', NEWPW);
		await page.fill('#confirmPassword', NEWPW);
		await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
		ok(/Password changed/.test(await page.textContent('main')), 'the password is changed, and a toast says so', page.url());

		// a cookie does not reach the API: bearer only
		const apiByCookie = await page.evaluate(async () => (await fetch('/api/v1/tenants')).status);
		ok(apiByCookie === 401, 'the session cookie does not authenticate /api (401)', apiByCookie);
		const forgedAdmin = await page.evaluate(async () => (await fetch('/tenants', { method: 'POST',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=forged&clusterProvider=sim' })).status);
		ok(forgedAdmin === 403, 'an admin\'s form post without the CSRF token is refused (403)', forgedAdmin);
		await ctx.close();

		await flow(browser, BASE, '', 'web1');

		// a view user: no mutating controls, and forged posts refused
		const adm = await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW });
		const mk = await api('POST', '/api/v1/users', adm.json.token, { apiVersion: 'rezuscloud.io/v1', kind: 'User', metadata: { name: 'viewer' }, spec: { role: 'view', password: VIEWPW } });
		ok(mk.code === 201, 'a view user is created through the API', JSON.stringify(mk.json));
		const vctx = await browser.newContext();
		const vp = await vctx.newPage();
		await login(vp, BASE, 'viewer', VIEWPW);
		let mutating = 0;
		const where = [];
		for (const p of ['/', '/tenants', '/tenants/web1', '/tenants/web1/nodegroups', '/tenants/web1/machines', '/tenants/web1/runs', '/tenants/web1/nodegroups/cp/delete']) {
			await vp.goto(BASE + p);
			const n = await vp.locator('form[method=post]:not([action$="/logout"])').count();
			if (n > 0) where.push(`${p}: ${n}`);
			mutating += n;
		}
		ok(mutating === 0, 'a view user finds no mutating control on any page', where.join(', '));
		await audit(vp, 'tenants-view');
		const csrf = await vp.getAttribute('meta[name=csrf-token]', 'content');
		const post = (body) => vp.evaluate(async (b) => (await fetch('/tenants/web1/nodegroups/cp/scale', { method: 'POST',
			headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: b })).status, body);
		ok(await post('count=5') === 403, 'a forged POST without a CSRF token is refused (403)');
		ok(await post('count=5&csrf=' + '0'.repeat(64)) === 403, 'and with a wrong one (403)');
		const real = await post('count=5&csrf=' + csrf);
		ok(real === 403, 'with the right token the API still refuses the view user (403)', real);
		await vctx.close();

		// the same behind a Home Assistant style ingress
		const proxy = await ingressProxy(BASE);
		const IBASE = `http://127.0.0.1:${proxy.address().port}${PREFIX}`;
		const { ctx: ictx, page: ip } = await flow(browser, IBASE, 'ingress', 'web2');
		const bad = [];
		for (const p of ['/', '/tenants', '/tenants/web2', '/tenants/web2/nodegroups', '/tenants/web2/machines', '/tenants/web2/runs']) {
			const r = await ip.goto(IBASE + p);
			const csp = r.headers()['content-security-policy'] || '';
			if (/frame-ancestors/.test(csp) || r.headers()['x-frame-options']) bad.push(`${p}: framing refused (${csp})`);
			for (const u of await urls(ip)) {
				if (!u.startsWith(PREFIX + '/')) bad.push(`${p}: ${u}`);
			}
		}
		ok(bad.length === 0, 'under the ingress every link, form, asset and SSE URL carries the prefix, and framing is allowed', bad.slice(0, 10).join('\n'));
		const icookie = (await ictx.cookies()).find((c) => c.name === 'rezus_session');
		ok(icookie && icookie.path === PREFIX, 'the session cookie is scoped to the ingress prefix', JSON.stringify(icookie));
		await Promise.all([ip.waitForNavigation(), ip.click('header button[type=submit]')]);
		ok(new URL(ip.url()).pathname === PREFIX + '/login', 'logging out redirects under the prefix', ip.url());
		await ictx.close();
		proxy.close();
	} finally {
		await browser.close();
	}
	console.log(`# pages checked with axe: ${audited()}`);
	return failures();
}

main().then(() => process.exit(0), (e) => {
	console.log(`not ok - the browser run stopped: ${String(e).split('\n')[0]}`);
	console.error(e);
	process.exit(1);
});
