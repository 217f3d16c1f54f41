// tests/stand-ins/oidc-provider.mjs - an OpenID provider on loopback for tests/integration/oidc.sh
// and oidc-cli.sh:
// the certified `oidc-provider` package (build/node) with its development login form (any
// login, any password), three clients and a groups claim. Each start signs with a new RSA
// key of a new kid: a restart is a key rotation.
//
// Environment: OIDC_PORT (its port on 127.0.0.1), OIDC_WEB_REDIRECT (the WebUI's callback),
// OIDC_CLI_REDIRECT (a command-line client's loopback callback). Clients: rezus-web
// (confidential, client_secret_post, secret "web-secret-for-tests"), rezusctl (public, PKCE)
// and other-app (public, PKCE: tokens meant for someone else). The public ones are native
// clients: besides OIDC_CLI_REDIRECT they may come back to http://127.0.0.1:ANY-PORT/callback
// (RFC 8252's loopback redirect, what `rezusctl login --oidc` listens on), and they may use the
// device authorization grant (RFC 8628; the device flow is on, its pages the package's own).
// Accounts: any login; alice is in team-a and platform-admins, bob in team-b, everyone else in
// no group. Prints "listening KID" once it serves. NODE_PATH: build/node's node_modules.
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// NODE_PATH names build/node's modules; an ES module is not found through it.
const { default: Provider } = await import(pathToFileURL(path.join(process.env.NODE_PATH, 'oidc-provider', 'lib', 'index.js')).href);

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const groups = { alice: ['team-a', 'platform-admins'], bob: ['team-b'] };

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = crypto.randomBytes(8).toString('hex');
const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

const cli = (id) => ({
	client_id: id,
	token_endpoint_auth_method: 'none',
	redirect_uris: [process.env.OIDC_CLI_REDIRECT, 'http://127.0.0.1/callback'],
	grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
	response_types: ['code'],
	application_type: 'native',
});

const provider = new Provider(issuer, {
	clients: [
		{
			client_id: 'rezus-web',
			client_secret: 'web-secret-for-tests',
			token_endpoint_auth_method: 'client_secret_post',
			redirect_uris: [process.env.OIDC_WEB_REDIRECT],
			grant_types: ['authorization_code'],
			response_types: ['code'],
		},
		cli('rezusctl'),
		cli('other-app'),
	],
	jwks: { keys: [jwk] },
	cookies: { keys: ['stand-in-cookie-key'] },
	claims: { openid: ['sub'], profile: ['preferred_username', 'name'], groups: ['groups'] },
	scopes: ['openid', 'profile', 'groups'],
	conformIdTokenClaims: false, // the ID token carries the claims (the code flow's too)
	pkce: { required: () => true },
	features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
	async findAccount(ctx, id) {
		return {
			accountId: id,
			async claims() {
				return { sub: id, preferred_username: id, name: id, groups: groups[id] || [] };
			},
		};
	},
	// Every scope asked for is granted: no consent page.
	async loadExistingGrant(ctx) {
		const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
		if (id) return ctx.oidc.provider.Grant.find(id);
		if (!ctx.oidc.session.accountId) return undefined;
		const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
		grant.addOIDCScope('openid profile groups');
		await grant.save();
		return grant;
	},
});

provider.listen(port, '127.0.0.1', () => console.log(`listening ${kid}`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
