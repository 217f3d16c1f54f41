// tests/integration/openapi-client.ts - a small client typed by the types openapi-typescript
// generates from the daemon's /openapi/v3/api/v1 (tests/integration/openapi.sh writes them to
// ./api.d.ts beside this file). It compiles with tsc --strict only if the document declares the
// path parameters ({tenant}), the bodies and an open providerConfig; run, it lists a tenant's
// node groups and reads providerConfig's members.
import type { components, paths } from "./api";

// node's own, without @types/node
declare const process: { argv: string[]; exit(code: number): never };

type NodeGroup = components["schemas"]["NodeGroup"];
type Status = components["schemas"]["Status"];
type ListOp = paths["/api/v1/tenants/{tenant}/nodegroups"]["get"];
type ListReply = ListOp["responses"][200]["content"]["application/json"];
type ListPath = paths["/api/v1/tenants/{tenant}/nodegroups"]["parameters"]["path"];
type ProviderConfig = NonNullable<NodeGroup["spec"]>["providerConfig"];

// Every templated path types its parameters: none is left as `path?: never`.
type Templated = Extract<keyof paths, `${string}{${string}`>;
type Untyped = {
	[K in Templated]: [NonNullable<paths[K]["parameters"]["path"]>] extends [never] ? K : never;
}[Templated];
const everyPathTyped: [Untyped] extends [never] ? true : false = true;

// providerConfig is an open object: a member of any name can be written and read.
const example: ProviderConfig = { region: "eu-1", shape: { ocpus: 2 } };

async function listNodeGroups(base: string, token: string, path: ListPath): Promise<ListReply> {
	const url = `${base}/api/v1/tenants/${encodeURIComponent(path.tenant)}/nodegroups`;
	const r = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
	if (r.status !== 200) {
		const st = (await r.json()) as Status;
		const causes = (st.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
		throw new Error(`${r.status} ${st.reason}: ${st.message} ${causes.join("; ")}`);
	}
	return (await r.json()) as ListReply;
}

async function main(): Promise<void> {
	const [base, token, tenant] = process.argv.slice(2);
	const list = await listNodeGroups(base, token, { tenant });
	for (const ng of list.items) {
		const pc: ProviderConfig = ng.spec?.providerConfig ?? {};
		const keys = Object.keys(pc).sort().join(",");
		console.log(`${ng.metadata?.name} role=${ng.spec?.role} providerConfig=${keys}`);
	}
	console.log(`typed=${everyPathTyped} example=${Object.keys(example).join(",")}`);
}

main().catch((e: unknown) => {
	console.error(String(e));
	process.exit(1);
});
