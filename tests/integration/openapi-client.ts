// tests/integration/openapi-client.ts - a client of the daemon made with openapi-fetch and the
// types openapi-typescript generates from /openapi/v3/api/v1 (tests/integration/openapi.sh
// writes them to ./api.d.ts beside this file). It compiles with tsc --strict and no cast only
// if the document declares each path's parameters, one type per answer (a list's 200 is the
// list, its stream another operation), the bodies, the Status of every error and an open
// providerConfig. Run, it lists, creates, reads and patches node groups of a tenant, watches
// them, and prints what it saw, one fact a line, for openapi.sh to compare.
import createClient from "openapi-fetch";
import type { components, paths } from "./api";

// node's own, without @types/node
declare const process: { argv: string[]; exit(code: number): never };

type NodeGroup = components["schemas"]["NodeGroup"];
type WatchEvent = components["schemas"]["WatchEvent"];
type ProviderConfig = NonNullable<NodeGroup["spec"]>["providerConfig"];

// Every templated path types its parameters: none is left as `path?: never`.
type Templated = Extract<keyof paths, `${string}{${string}`>;
type Untyped = {
	[K in Templated]: [NonNullable<paths[K]["parameters"]["path"]>] extends [never] ? K : never;
}[Templated];
const everyPathTyped: [Untyped] extends [never] ? true : false = true;

// providerConfig is an open object: a member of any name can be written and read.
const example: ProviderConfig = { region: "eu-1", shape: { ocpus: 2 } };

function fail(what: string, status: number, error: components["schemas"]["Status"]): never {
	const causes = (error.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
	throw new Error(`${what}: ${status} ${error.reason}: ${error.message} ${causes.join("; ")}`);
}

async function main(): Promise<void> {
	const [base, token, tenant] = process.argv.slice(2);
	const client = createClient<paths>({
		baseUrl: base,
		headers: { Authorization: `Bearer ${token}` },
	});
	const path = { tenant };

	// list: data is the NodeGroupList, error the Status
	const list = await client.GET("/api/v1/tenants/{tenant}/nodegroups", {
		params: { path },
	});
	if (list.error) fail("list", list.response.status, list.error);
	for (const ng of list.data.items) {
		const keys = Object.keys(ng.spec?.providerConfig ?? {}).sort().join(",");
		console.log(`${ng.metadata?.name} role=${ng.spec?.role} providerConfig=${keys}`);
	}

	// create: the body is a NodeGroup; 201 answers it with the server's fields
	const spec: NonNullable<NodeGroup["spec"]> = {
		role: "worker",
		count: 1,
		providerClass: "sim",
		providerConfig: { addressPrefix: "10.21.0" },
	};
	const body: NodeGroup = {
		apiVersion: "rezuscloud.io/v1",
		kind: "NodeGroup",
		metadata: { name: "ts-workers", labels: { made: "openapi-fetch" } },
		spec,
	};
	const made = await client.POST("/api/v1/tenants/{tenant}/nodegroups", {
		params: { path },
		body,
	});
	if (made.error) fail("create", made.response.status, made.error);
	console.log(`created=${made.data.metadata?.name} code=${made.response.status} ` +
		`generation=${made.data.metadata?.generation} tenant=${made.data.metadata?.tenant}`);

	// get
	const item = { tenant, name: "ts-workers" };
	const got = await client.GET("/api/v1/tenants/{tenant}/nodegroups/{name}", {
		params: { path: item },
	});
	if (got.error) fail("get", got.response.status, got.error);
	console.log(`got=${got.data.metadata?.name} count=${got.data.spec?.count} ` +
		`uid=${got.data.metadata?.uid === made.data.metadata?.uid}`);

	// patch: a JSON merge patch, sent as one
	const patched = await client.PATCH("/api/v1/tenants/{tenant}/nodegroups/{name}", {
		params: { path: item },
		body: { spec: { count: 3 } },
		headers: { "Content-Type": "application/merge-patch+json" },
	});
	if (patched.error) fail("patch", patched.response.status, patched.error);
	console.log(`patched count=${patched.data.spec?.count} ` +
		`generation=${patched.data.metadata?.generation}`);

	// a refused write: the error is a Status naming the field at fault
	const bad = await client.POST("/api/v1/tenants/{tenant}/nodegroups", {
		params: { path },
		body: { ...body, metadata: { name: "ts-bad" }, spec: { ...spec, count: 5000 } },
	});
	const causes = bad.error?.details?.causes?.map((c) => `${c.field}`).join(",");
	console.log(`refused code=${bad.response.status} reason=${bad.error?.reason} causes=${causes}`);

	// a missing object: 404, a Status
	const missing = await client.GET("/api/v1/tenants/{tenant}/nodegroups/{name}", {
		params: { path: { tenant, name: "nope" } },
	});
	console.log(`missing code=${missing.response.status} reason=${missing.error?.reason}`);

	// the watch operation: its stream, WatchEvents one per line
	const watch = await client.GET("/api/v1/watch/tenants/{tenant}/nodegroups", {
		params: { path, query: { labelSelector: "made=openapi-fetch" } },
		headers: { Accept: "application/x-ndjson" },
		parseAs: "stream",
	});
	if (watch.data == null) throw new Error(`watch: ${watch.response.status}`);
	const reader = watch.data.getReader();
	const decoder = new TextDecoder();
	let text = "";
	while (!text.includes("\n")) { // a line may span chunks
		const chunk = await reader.read();
		if (chunk.done) break;
		text += decoder.decode(chunk.value, { stream: true });
	}
	await reader.cancel();
	const line = text.split("\n")[0];
	const event: WatchEvent = JSON.parse(line);
	console.log(`watched ${event.type} ${JSON.stringify(event.object.metadata)}`.slice(0, 60));

	console.log(`typed=${everyPathTyped} example=${Object.keys(example).join(",")}`);
}

main().catch((e: unknown) => {
	console.error(String(e));
	process.exit(1);
});
