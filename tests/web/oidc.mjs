// tests/web/oidc.mjs - single sign-on against a real OpenID provider (tests/stand-ins/
// oidc-provider.mjs, which this script starts and restarts), in Debian's chromium driven by
// playwright-core; run by tests/integration/oidc.sh, which starts the daemon. Prints
// "ok - ...", "not ok - ..." and "# ..." lines; exits non-zero when something could not run.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { harness, apiAt } from './lib.mjs';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { chromium } = require('playwright-core');
const axeSource = require('axe-core').source;

const BASE = process.env.WEBUI_URL;
const ISSUER = `http://127.0.0.1:${process.env.OIDC_PORT}`;
const CLI_REDIRECT = `http://127.0.0.1:${process.env.CLI_PORT}/cb`;
const { ok, audit, failures } = harness(axeSource, process.env.WEBUI_SHOTS);
const api = apiAt(BASE);
const b64url = (b) => Buffer.from(b).toString('base64url');
const NAV = { waitUntil: 'domcontentloaded' };

// ---- the provider, started and restarted (a new key each time)

let provider = null;
function startProvider() {
	return new Promise((resolve, reject) => {
		const p = spawn(process.execPath, [process.env.OIDC_STANDIN], {
			env: { ...process.env, OIDC_WEB_REDIRECT: `${BASE}/login/oidc/callback`, OIDC_CLI_REDIRECT: CLI_REDIRECT },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let out = '';
		p.stdout.on('data', (d) => {
			out += d;
			const m = out.match(/listening (\w+)/);
			if (m && provider !== p) {
				provider = p;
				resolve(m[1]);
			}
		});
		p.on('exit', (code) => { if (provider !== p) reject(new Error(`the provider exited: ${code}`)); });
	});
}
function stopProvider() {
	const p = provider;
	provider = null;
	return new Promise((resolve) => { p.on('exit', resolve); p.kill('SIGTERM'); });
}

// ---- sign-ins

// The provider's development login form: any login, any password.
async function providerLogin(page, user) {
	await page.waitForSelector('input[name=login]');
	await page.fill('input[name=login]', user);
	await page.fill('input[name=password]', 'any-password');
	await page.click('button[type=submit]');
}

// Through the WebUI's button, in a browser of its own; resolves to the page where it lands.
async function webSignIn(browser, user) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	await page.goto(BASE + '/login', NAV);
	await page.click('#sso-login');
	await providerLogin(page, user);
	await page.waitForURL((u) => u.origin === BASE, NAV); // back from the provider: a server redirect or an error page
	await page.waitForLoadState('domcontentloaded');
	return page;
}

// An ID token of client for user the way a command-line client gets one: the code flow with
// PKCE to a loopback redirect (caught in the browser), the code exchanged by us.
async function cliToken(browser, client, user, nonce) {
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	const verifier = b64url(crypto.randomBytes(32));
	const challenge = b64url(crypto.createHash('sha256').update(verifier).digest());
	let landed = null;
	await page.route(CLI_REDIRECT + '**', (route) => {
		landed = route.request().url();
		route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
	});
	const q = new URLSearchParams({ client_id: client, response_type: 'code', scope: 'openid profile groups',
		redirect_uri: CLI_REDIRECT, state: 'cli-state', nonce, code_challenge: challenge, code_challenge_method: 'S256' });
	await page.goto(`${ISSUER}/auth?${q}`, NAV);
	await providerLogin(page, user);
	// the provider asks a native client's user to consent (native_client_prompt)
	for (let i = 0; i < 100 && landed === null; i++) {
		if (await page.isVisible('button:has-text("Continue")').catch(() => false)) {
			await page.click('button:has-text("Continue")').catch(() => {});
		}
		await page.waitForTimeout(100);
	}
	const where = `${page.url()}: ${(await page.textContent('body').catch(() => '')).slice(0, 300)}`;
	await ctx.close();
	const code = landed && new URL(landed).searchParams.get('code');
	if (!code) throw new Error(`no code came back for ${client}: ${landed} (at ${where})`);
	const r = await fetch(`${ISSUER}/token`, {
		method: 'POST',
		headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CLI_REDIRECT, client_id: client, code_verifier: verifier }),
	});
	const j = await r.json();
	if (!j.id_token) throw new Error(`no ID token for ${client}: ${JSON.stringify(j)}`);
	return j.id_token;
}

const exchange = (idToken, nonce) => api('POST', '/api/v1/auth/oidc/token', null, nonce === undefined ? { idToken } : { idToken, nonce });
const part = (t, i) => JSON.parse(Buffer.from(t.split('.')[i], 'base64url'));

async function main() {
	const kid1 = await startProvider();
	const browser = await chromium.launch({ executablePath: process.env.WEBUI_CHROMIUM, args: ['--headless', '--no-sandbox'] });
	try {
		const admin = (await api('POST', '/api/v1/auth/login', null, { username: 'admin', password: process.env.ADMIN_PW })).json.token;
		const made = await api('POST', '/api/v1/users', admin, { apiVersion: 'rezuscloud.io/v1', kind: 'User',
			metadata: { name: 'carol' }, spec: { role: 'view', password: 'carol-local-pw-1' } });
		ok(made.code === 201, 'a local user carol is made', JSON.stringify(made));

		const info = await api('GET', '/api/v1/auth/oidc');
		ok(info.code === 200 && info.json.issuer === ISSUER && info.json.clientID === 'rezusctl' &&
			info.json.scopes === 'openid profile groups',
		'GET /api/v1/auth/oidc names the issuer, the CLI\'s client id and the scopes', JSON.stringify(info));

		// the login page offers single sign-on, and passes the audit
		{
			const ctx = await browser.newContext();
			const page = await ctx.newPage();
			await page.goto(BASE + '/login', NAV);
			const text = await page.textContent('#sso-login').catch(() => null);
			ok(text === 'Sign in with Example ID', 'the login page offers "Sign in with Example ID"', text);
			ok(await page.isVisible('#password'), 'and the password form stays');
			await audit(page, 'login-sso');
			await ctx.close();
		}

		// alice: made at her first login, with her groups and the role her group maps to
		{
			const page = await webSignIn(browser, 'alice');
			const url = new URL(page.url());
			ok(url.origin === BASE && url.pathname === '/', 'alice signs in through the provider and lands on the dashboard', page.url());
			const cookies = await page.context().cookies(BASE);
			const session = cookies.find((c) => c.name === 'rezus_session');
			ok(session && session.httpOnly, 'with an HttpOnly session cookie', JSON.stringify(cookies.map((c) => c.name)));
			ok(!cookies.some((c) => c.name === 'rezus_oidc' && c.value !== ''), 'and the sign-in\'s state cookie is gone');
			ok((await page.textContent('body')).includes('alice'), 'the page names alice');
			await audit(page, 'sso-dashboard');
			await page.context().close();
			const u = await api('GET', '/api/v1/users/alice', admin);
			ok(u.code === 200 && u.json.spec.role === 'admin' &&
				JSON.stringify(u.json.spec.groups) === JSON.stringify(['oidc-team-a', 'oidc-platform-admins']) &&
				u.json.spec.identity.issuer === ISSUER && u.json.spec.identity.subject === 'alice' &&
				u.json.status.lastLogin !== undefined,
			'the user alice exists: role admin (platform-admins=admin), groups oidc-team-a and oidc-platform-admins, identity at the issuer', JSON.stringify(u.json));
			const pw = await api('POST', '/api/v1/auth/login', null, { username: 'alice', password: 'any-password' });
			ok(pw.code === 401, 'alice cannot log in with a password', JSON.stringify(pw));
		}

		// bob: no mapped group, role none
		{
			const page = await webSignIn(browser, 'bob');
			ok(new URL(page.url()).origin === BASE, 'bob signs in too', page.url());
			await page.context().close();
			const u = await api('GET', '/api/v1/users/bob', admin);
			ok(u.code === 200 && u.json.spec.role === 'none' && JSON.stringify(u.json.spec.groups) === '["oidc-team-b"]',
				'bob exists with role none and group oidc-team-b', JSON.stringify(u.json));
		}

		// carol is a local user: not taken over
		{
			const page = await webSignIn(browser, 'carol');
			const body = await page.textContent('body');
			ok(body.includes("a local user 'carol' exists"), 'a sign-in as the local user carol is refused, saying why', body.slice(0, 400));
			await page.context().close();
			const u = await api('GET', '/api/v1/users/carol', admin);
			ok(u.code === 200 && u.json.spec.identity === undefined && u.json.spec.role === 'view', 'carol stays the local user she was', JSON.stringify(u.json));
		}

		// the user cancels at the provider: a clear page
		{
			const ctx = await browser.newContext();
			const page = await ctx.newPage();
			await page.goto(BASE + '/login', NAV);
			await page.click('#sso-login');
			await page.waitForSelector('input[name=login]');
			await Promise.all([page.waitForURL((u) => u.href.startsWith(BASE), NAV), page.click('text=[ Cancel ]')]);
			const body = await page.textContent('body');
			ok(body.includes('refused the sign-in: access_denied'), 'a sign-in canceled at the provider says access_denied', body.slice(0, 400));
			await audit(page, 'sso-denied');
			const resp = await page.goto(`${BASE}/login/oidc/callback?state=${'A'.repeat(43)}&code=stolen`, NAV);
			ok(resp.status() === 403, 'a callback whose state this browser did not begin is refused (403)', String(resp.status()));
			await ctx.close();
		}

		// the API route with the provider's real ID tokens, and tampered ones
		{
			const t1 = await cliToken(browser, 'rezusctl', 'alice', 'nonce-1');
			ok(part(t1, 0).kid === kid1, 'the provider signs with its first key', JSON.stringify(part(t1, 0)));
			const r1 = await exchange(t1, 'nonce-1');
			ok(r1.code === 200 && r1.json.user.name === 'alice' && r1.json.user.role === 'admin',
				'POST /api/v1/auth/oidc/token takes the CLI\'s ID token: a session for alice', JSON.stringify(r1));
			const who = await api('GET', '/api/v1/auth/whoami', r1.json && r1.json.token);
			ok(who.code === 200 && who.json.user === 'alice', 'the session works (whoami)', JSON.stringify(who));
			const again = await exchange(t1, 'nonce-1');
			ok(again.code === 401 && /used already/.test(again.json.message), 'the same ID token a second time is refused', JSON.stringify(again));

			const t2 = await cliToken(browser, 'rezusctl', 'alice', 'nonce-2');
			const [h, p, s] = t2.split('.');
			const sig = Buffer.from(s, 'base64url');
			sig[10] ^= 1;
			const forged = await exchange(`${h}.${p}.${b64url(sig)}`, 'nonce-2');
			ok(forged.code === 401 && /signature/.test(forged.json.message), 'a forged signature is refused', JSON.stringify(forged));
			const claims = part(t2, 1);
			claims.preferred_username = 'admin';
			const swapped = await exchange(`${h}.${b64url(JSON.stringify(claims))}.${s}`, 'nonce-2');
			ok(swapped.code === 401, 'claims changed under the signature are refused', JSON.stringify(swapped));
			const none = await exchange(`${b64url('{"alg":"none"}')}.${b64url(JSON.stringify(claims))}.`, 'nonce-2');
			ok(none.code === 401 && /algorithm/.test(none.json.message), 'alg none is refused', JSON.stringify(none));
			const nonce = await exchange(t2, 'another-nonce');
			ok(nonce.code === 401 && /nonce/.test(nonce.json.message), 'a wrong nonce is refused', JSON.stringify(nonce));
			const r2 = await exchange(t2, 'nonce-2');
			ok(r2.code === 200, 'and with its own nonce the token is taken', JSON.stringify(r2));

			const other = await cliToken(browser, 'other-app', 'alice', 'nonce-3');
			const aud = await exchange(other, 'nonce-3');
			ok(aud.code === 401 && /another client/.test(aud.json.message), 'an ID token meant for another client (aud) is refused', JSON.stringify(aud));

			const t4 = await cliToken(browser, 'rezusctl', 'bob', 'nonce-4');
			const r4 = await exchange(t4);
			ok(r4.code === 200 && r4.json.user.role === 'none', 'without a nonce (the CLI need not send one) bob gets a session', JSON.stringify(r4));
			const carol = await exchange(await cliToken(browser, 'rezusctl', 'carol', 'nonce-5'), 'nonce-5');
			ok(carol.code === 403 && /local user/.test(carol.json.message), 'the API refuses carol too (403)', JSON.stringify(carol));
		}

		// the provider rotates its key: the daemon fetches the new set
		{
			await stopProvider();
			const kid2 = await startProvider();
			ok(kid2 !== kid1, 'the provider restarts with a new key', `${kid1} ${kid2}`);
			const t = await cliToken(browser, 'rezusctl', 'alice', 'nonce-6');
			ok(part(t, 0).kid === kid2, 'its tokens carry the new kid');
			const r = await exchange(t, 'nonce-6');
			ok(r.code === 200, 'a token signed with the new key is taken (the keys were fetched again)', JSON.stringify(r));
			const page = await webSignIn(browser, 'alice');
			ok(new URL(page.url()).pathname === '/' && new URL(page.url()).origin === BASE, 'and the WebUI\'s sign-in works after the rotation', page.url());
			await page.context().close();
		}
	} finally {
		await browser.close();
		if (provider) await stopProvider();
	}
}

main().then(() => process.exit(failures() > 0 ? 1 : 0), (e) => {
	console.log(`not ok - the browser script ran to its end`);
	console.log(`# ${String(e.stack || e).split('\n').slice(0, 8).join('\n# ')}`);
	if (provider) provider.kill('SIGTERM');
	process.exit(1);
});
