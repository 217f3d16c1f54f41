// tests/web/webui-tenancy.mjs - the WebUI under per-tenant access (AccessBindings) in Debian's
// chromium, driven by playwright-core, checked with axe-core; run by
// tests/integration/webui-tenancy.sh, which starts the daemon with the sim plugin. An admin
// binds alice (role none) as edit on a1 and victor (role none) as view on a1 through the
// Access page (a refused form keeps what was typed); alice sees a1 only, edits it, is refused
// a2 and the admin pages; victor sees no edit control and his forged edit post is refused;
// alice makes and revokes her own API token on My account and changes her password there; a
// view user's token above its ceiling is refused with the API's cause; once the admin deletes
// alice's binding she loses a1 on her next page. Prints "ok - ...", "not ok - ..." and "# ..."
// lines; exits non-zero when something could not run at all.
import { createRequire } from 'node:module';
import path from 'node:path';
import { harness, apiAt } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const SHOTS = process.env.WEBUI_SHOTS;
const NEWPW = 'webui-tenancy-admin-1';
const { ok, audit, failures, audited } = harness(axeSource, SHOTS);
const api = apiAt(BASE);

async function login(page, user, pw) {
	await page.goto(BASE + '/login');
	await page.fill('#username', user);
	await page.fill('#password', pw);
	await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
}

async function submit(page, selector) {
	const [resp] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
	return resp;
}

const text = async (page, sel) => ((await page.textContent(sel).catch(() => '')) || '').replace(/\s+/g, ' ').trim();

// A form posted from the page itself with its CSRF token (as a forged or replayed post would
// be): its status.
async function post(page, url, fields) {
	const csrf = await page.getAttribute('meta[name=csrf-token]', 'content');
	return page.evaluate(async (b) => (await fetch(b.url, { method: 'POST',
		headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams({ csrf: b.csrf, ...b.fields }).toString() })).status,
	{ url, csrf, fields });
}

async function user(browser, name, pw) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) console.error(m.text()); });
	await login(page, name, pw);
	return { ctx, page };
}

async function main() {
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		const { page } = await user(browser, 'admin', process.env.WEBUI_OTP);
		await page.fill('#currentPassword', process.env.WEBUI_OTP);
		await page.fill('#newPassword', NEWPW);
		await page.fill('#confirmPassword', NEWPW);
		await submit(page, 'main button[type=submit]');
		const tok = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: NEWPW })).json.token;
		for (const t of ['a1', 'a2']) {
			await api('POST', '/api/v1/tenants', tok, { metadata: { name: t }, spec: { clusterProvider: 'sim', talosVersion: '1.11.5', kubernetesVersion: '1.34.1' } });
		}
		for (const [name, role] of [['alice', 'none'], ['victor', 'none'], ['vera', 'view']]) {
			const r = await api('POST', '/api/v1/users', tok, { metadata: { name }, spec: { role, password: `${name}-password-1` } });
			ok(r.code === 201, `the API makes ${name} (role ${role})`, JSON.stringify(r.json));
		}
		ok(/Access/.test(await text(page, 'header nav')), 'an admin\'s header links the access bindings');

		// the Access page: a refused form keeps what was typed, then bindings are made
		await page.goto(BASE + '/access');
		ok(await page.locator('#no-bindings').count() === 1, 'the access page says there is no binding yet');
		await audit(page, 'bindings-empty');
		await page.fill('#b-name', 'alice-a1');
		await page.selectOption('#b-role', 'edit');
		await page.fill('#b-users', 'alice');
		const bad = await submit(page, '#create-binding button[type=submit]');
		const terr = await text(page, '#b-tenants-error');
		ok(bad && bad.status() === 422 && terr.length > 0, `a binding naming no tenant is refused 422 beside the tenants ("${terr}")`, bad && bad.status());
		ok(/Every tenant/.test(terr) && !/\{\}|selector/.test(terr), 'it says to choose tenants with the form\'s own controls (Every tenant), not the API\'s {}', terr);
		ok(await page.inputValue('#b-name') === 'alice-a1' && await page.inputValue('#b-users') === 'alice' &&
			await page.inputValue('#b-role') === 'edit', 'and the form keeps what was typed');
		await audit(page, 'bindings-invalid');
		await page.fill('#b-labels', 'team');
		const bad2 = await submit(page, '#create-binding button[type=submit]');
		ok(bad2 && bad2.status() === 422 && (await text(page, '#b-labels-error')).length > 0 && await page.inputValue('#b-users') === 'alice',
			'a label without a value is refused beside the labels, the form kept');
		await page.fill('#b-labels', '');
		await page.fill('#b-tenant-names', 'a1');
		await submit(page, '#create-binding button[type=submit]');
		const cells = (await page.locator('#bindings tbody tr', { hasText: 'alice-a1' }).locator('td').allTextContents()).slice(0, 5).join('|');
		ok(/Access binding created/.test(await text(page, 'main')) && cells === 'alice-a1|edit|alice|-|a1',
			'the binding is created and listed (role, user, tenant)', cells);
		await page.fill('#b-name', 'victor-a1');
		await page.selectOption('#b-role', 'view');
		await page.fill('#b-users', 'victor');
		await page.fill('#b-groups', 'auditors');
		await page.fill('#b-tenant-names', 'a1');
		await submit(page, '#create-binding button[type=submit]');
		const api1 = (await api('GET', '/api/v1/accessbindings/victor-a1', tok)).json;
		ok(api1 && api1.spec.role === 'view' && JSON.stringify(api1.spec.subjects) === '[{"kind":"User","name":"victor"},{"kind":"Group","name":"auditors"}]' &&
			JSON.stringify(api1.spec.tenants) === '{"names":["a1"]}', 'a view binding of a user and a group is in the API as typed', JSON.stringify(api1));
		await audit(page, 'bindings');

		// alice (role none, edit on a1)
		const alice = await user(browser, 'alice', 'alice-password-1');
		const ap = alice.page;
		const anav = await text(ap, 'header nav');
		ok(/My account/.test(anav) && !/Users|Audit|Backups|Access|Providers/.test(anav),
			'alice\'s header links My account and no admin page', anav);
		ok(/Tenants by phase/.test(await text(ap, 'main')), 'alice\'s dashboard opens');
		await ap.goto(BASE + '/tenants');
		ok(await ap.locator('#tenant-a1').count() === 1 && await ap.locator('#tenant-a2').count() === 0,
			'the tenants list shows alice a1 only', await text(ap, '#tenant-rows'));
		ok(await ap.locator('form[action$="/tenants"]').count() === 0, 'and offers her no tenant creation (no role on the installation)');
		const r1 = await ap.goto(BASE + '/tenants/a1');
		ok(r1.status() === 200 && await ap.locator('#delete-tenant').count() === 1, `a1's page opens with its edit controls (${r1.status()})`);
		const tabs = await text(ap, 'nav[aria-label=Tenant]');
		ok(/Credentials/.test(tabs) && !/State versions/.test(tabs), 'her tabs: credentials (edit), no state versions (admin)', tabs);
		await audit(ap, 'tenant-bound-edit');
		await ap.goto(BASE + '/tenants/a1/nodegroups');
		ok(await ap.locator('#add-nodegroup').count() === 1, 'a1\'s node groups offer alice the add form');
		await ap.fill('#ng-name', 'workers');
		await ap.selectOption('#ng-role', 'worker').catch(() => {});
		await submit(ap, '#add-nodegroup button[type=submit]');
		ok(/\/tenants\/a1\/nodegroups\?toast=created$/.test(ap.url()) && /workers/.test(await text(ap, 'main')),
			'alice adds a node group to a1 through the form', ap.url());
		const r2 = await ap.goto(BASE + '/tenants/a2');
		ok(r2.status() === 403 && /no access to this tenant/.test(await text(ap, 'main')) && !/AccessBinding/.test(await text(ap, 'main')),
			`a2's page is refused her, as the API refuses it, in plain words (${r2.status()})`, await text(ap, 'main'));
		const r2b = await ap.goto(BASE + '/tenants/a2/nodegroups');
		const r2c = await ap.goto(BASE + '/tenants/a2/configpatches');
		ok(r2b.status() === 403 && r2c.status() === 403, `so are a2's tabs (${r2b.status()}, ${r2c.status()})`);
		await audit(ap, 'tenant-refused');
		const ru = await ap.goto(BASE + '/users');
		const ra = await ap.goto(BASE + '/access');
		ok(ru.status() === 403 && ra.status() === 403, `the users and access pages are refused her (${ru.status()}, ${ra.status()})`);
		await ap.goto(BASE + '/tenants/a1');
		ok(await post(ap, '/tenants/a2/nodegroups', { name: 'x', role: 'worker', count: '1', providerClass: 'sim' }) === 403,
			'her post of a node group into a2 is refused (403)');

		// victor (role none, view on a1)
		const victor = await user(browser, 'victor', 'victor-password-1');
		const vp = victor.page;
		const rv = await vp.goto(BASE + '/tenants/a1');
		ok(rv.status() === 200 && await vp.locator('#delete-tenant').count() === 0, `victor reads a1 without the tenant's deletion (${rv.status()})`);
		await vp.goto(BASE + '/tenants/a1/nodegroups');
		ok(await vp.locator('#add-nodegroup').count() === 0 && await vp.locator('form[action*="/scale"]').count() === 0,
			'and a1\'s node groups offer him no add or scale form');
		ok(!/Credentials/.test(await text(vp, 'nav[aria-label=Tenant]')), 'and no credentials tab');
		await audit(vp, 'tenant-bound-view');
		const forged = await post(vp, '/tenants/a1/nodegroups', { name: 'sneaky', role: 'worker', count: '1', providerClass: 'sim' });
		ok(forged === 403, `his post of the add form is refused (${forged})`);
		ok((await api('GET', '/api/v1/tenants/a1/nodegroups/sneaky', tok)).code === 404, 'and made nothing');

		// My account: alice's tokens and password
		await ap.click('#nav-account');
		await ap.waitForURL(/\/account$/);
		ok(/alice, no role on the whole installation: an administrator grants you roles on some tenants/.test(await text(ap, '#account-who')) && await ap.locator('#no-tokens').count() === 1 &&
			await ap.locator('#change-password').count() === 1, 'My account names alice, with no role on the installation said plainly, no tokens, and the password form');
		const ahead = await text(ap, 'header');
		ok(/alice \(roles per tenant\)/.test(ahead) && !/\(none\)/.test(ahead), 'the header says her roles are per tenant, not "(none)"', ahead.replace(/\s+/g, ' '));
		await audit(ap, 'account');
		await ap.fill('#t-description', 'alice laptop');
		await submit(ap, '#create-token button[type=submit]');
		const secret = await ap.inputValue('#token-secret').catch(() => '');
		ok(/^rzt_[A-Za-z0-9_-]{43}$/.test(secret) && !ap.url().includes(secret.slice(4)), 'alice creates a token: its secret shown once, not in the URL', ap.url());
		await audit(ap, 'account-new-token');
		const id = (await text(ap, '#tokens tbody td')).split(' ')[0];
		ok(/^tok-/.test(id) && /alice laptop/.test(await text(ap, '#tokens')), `the token is listed (${id})`);
		ok((await api('GET', '/api/v1/tenants/a1', secret)).code === 200 && (await api('GET', '/api/v1/tenants/a2', secret)).code === 403,
			'her token reads a1, not a2');
		await ap.reload();
		ok(await ap.locator('#token-secret').count() === 0, 'the secret is not shown again');
		await submit(ap, `#revoke-${id}`);
		ok(/Token revoked/.test(await text(ap, 'main')) && await ap.locator('#no-tokens').count() === 1, 'alice revokes it');
		ok((await api('GET', '/api/v1/tenants/a1', secret)).code === 401, 'and the API refuses it');
		await ap.goto(BASE + '/account');
		await ap.fill('#currentPassword', 'alice-password-1');
		await ap.fill('#newPassword', 'alice-password-2');
		await ap.fill('#confirmPassword', 'alice-password-2');
		await submit(ap, '#change-password button[type=submit]');
		ok(/Password changed/.test(await text(ap, 'main')), 'alice changes her password on My account');
		ok((await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: 'alice-password-2' })).code === 200, 'and logs in with the new one');

		// vera (role view): a token above her ceiling is refused with the API's cause
		const vera = await user(browser, 'vera', 'vera-password-1');
		await vera.page.goto(BASE + '/account');
		await vera.page.fill('#t-description', 'too strong');
		await vera.page.selectOption('#t-role', 'admin');
		const over = await submit(vera.page, '#create-token button[type=submit]');
		const rerr = await text(vera.page, '#t-role-error');
		ok(over && over.status() === 422 && rerr.length > 0 && await vera.page.inputValue('#t-description') === 'too strong',
			`vera's admin token is refused beside its role ("${rerr}"), the form kept`, over && over.status());
		const vmain = await text(vera.page, 'main');
		const vlinks = await vera.page.evaluate(() => [...document.querySelectorAll('#form-problems a')].map((a) => `${a.getAttribute('href')} ${a.textContent}`));
		ok(vlinks.join('|') === '#t-role Role' && vmain.split(rerr.trim()).length === 2 && !/is invalid|APIToken|tok-|spec\./.test(vmain) &&
			await vera.page.locator('.toast').count() === 0,
			'one place for it: beside the role, a summary linking to it, no banner, no API words, no token named', `${vlinks.join('|')} / ${vmain.replace(/\s+/g, ' ').slice(0, 400)}`);
		await audit(vera.page, 'account-refused');

		// the admin deletes alice's binding: her next page has no a1
		await page.goto(BASE + '/access');
		await submit(page, '#delete-alice-a1');
		ok(/Deleted/.test(await text(page, 'main')) && !/alice-a1/.test(await text(page, 'main')), 'the admin deletes alice\'s binding');
		const gone = await ap.goto(BASE + '/tenants/a1');
		ok(gone.status() === 403, `alice loses a1 on her next page (${gone.status()})`);
		await ap.goto(BASE + '/tenants');
		ok(await ap.locator('#tenant-a1').count() === 0, 'and her tenants list is empty');
		ok(audited() >= 8, `axe ran on the new pages (${audited()})`);
	} finally {
		await browser.close();
	}
	process.exit(failures() ? 1 : 0);
}

main().catch((e) => { console.log(`not ok - the browser script runs: ${e.message.split('\n')[0]}`); console.error(e); process.exit(2); });
