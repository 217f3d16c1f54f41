/* cli/main.c - rezusctl: global flags, the command table, help, exit statuses. */
#include <config.h>

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/rezusctl.h"

static const struct command {
	const char *name;
	rzc_cmd_fn fn;
	const char *args;
	const char *help;
	bool dry_run; /* takes --dry-run: writes nothing when given it */
} commands[] = {
	{ "get", rzc_cmd_get, "TYPE [NAME...] [-w] [-l SELECTOR] [--field-selector SELECTOR]",
	  "list or show objects", false },
	{ "describe", rzc_cmd_describe, "TYPE NAME",
	  "an object, its conditions, related objects, recent runs, its events", false },
	{ "apply", rzc_cmd_apply, "-f FILE|DIR|- [--dry-run[=server|client]]",
	  "create or update objects from YAML or JSON", true },
	{ "create", rzc_cmd_create, "-f FILE|DIR|- [--dry-run[=server|client]]",
	  "create objects from YAML or JSON", true },
	{ "delete", rzc_cmd_delete, "TYPE NAME... | -f FILE [--dry-run[=server|client]]",
	  "delete objects", true },
	{ "edit", rzc_cmd_edit, "TYPE NAME", "edit an object in $EDITOR", false },
	{ "scale", rzc_cmd_scale, "nodegroup NAME --replicas N [--dry-run[=server|client]]",
	  "set a node group's count", true },
	{ "runs", rzc_cmd_runs, "[TENANT]", "a tenant's runs, newest first", false },
	{ "logs", rzc_cmd_logs, "RUN [-f] [--raw]",
	  "a run's tofu output; -f follows it until it ends, --raw: tofu's JSON lines", false },
	{ "plan", rzc_cmd_plan, "TENANT", "start a plan run (changes nothing)", false },
	{ "reconcile", rzc_cmd_reconcile, "TENANT",
	  "start an apply run now: make the tenant what its objects say", false },
	{ "approve", rzc_cmd_approve, "RUN [-y] [--reason TEXT]",
	  "show what a run awaiting approval would change, then let it apply", false },
	{ "cancel", rzc_cmd_cancel, "RUN", "cancel a queued, waiting or running run", false },
	{ "kubeconfig", rzc_cmd_kubeconfig, "TENANT [-o FILE] [--merge]", "the tenant's kubeconfig",
	  false },
	{ "talosconfig", rzc_cmd_talosconfig, "TENANT [-o FILE]", "the tenant's talosconfig",
	  false },
	{ "export", rzc_cmd_export, "TENANT DIR [--backend NAME] [--force]",
	  "the tenant as a directory plain tofu carries on with (holds secrets)", false },
	{ "state", rzc_cmd_state, "list TENANT | rollback TENANT VERSION",
	  "a tenant's TF state versions; roll back to one (admin)", false },
	{ "upgrade", rzc_cmd_upgrade,
	  "TENANT --talos V | --kubernetes V [--dry-run] | cancel TENANT UPGRADE",
	  "start an upgrade (a dry run prints its prechecks and plan), or cancel one", true },
	{ "login", rzc_cmd_login,
	  "[SERVER] [--username U] [--password-stdin] | [SERVER] --oidc [--device] [--no-browser]",
	  "log in (with a password, or single sign-on); store a token in the context", false },
	{ "logout", rzc_cmd_logout, "", "revoke the context's token and forget it", false },
	{ "config", rzc_cmd_config, "get-contexts|use-context NAME|set-context NAME|view",
	  "the config file's contexts", false },
	{ "user", rzc_cmd_user, "list|create NAME --role R [--password-stdin]|delete NAME",
	  "users (admin)", false },
	{ "password", rzc_cmd_password, "[--password-stdin]",
	  "change your password (a local user's)", false },
	{ "token", rzc_cmd_token,
	  "list|create [--role R] [--description D] [--expires T]|delete ID", "your API tokens",
	  false },
	{ "audit", rzc_cmd_audit, "[--limit N]",
	  "the audit log (admin; a tenant's admin: its rows)", false },
	{ "backup", rzc_cmd_backup, "list|create|get NAME|tenant TENANT",
	  "backups of the server (admin): list them, take one, read one's manifest; or a "
	  "snapshot of a tenant's etcd now",
	  false },
	{ "api-resources", rzc_cmd_api_resources, "", "the server's resource types", false },
	{ "version", rzc_cmd_version, "", "client and server versions", false },
	{ "completion", rzc_cmd_completion, "bash|zsh", "a shell completion script", false },
	{ "boot", rzc_cmd_boot, "[--platform local|docker|qemu] [--data-dir D] [--listen ADDR]",
	  "set up and start RezusCloud, log in", false },
};

/* The commands that write and take --dry-run say so in their help. */
#define DRY_RUN_HELP                                                                               \
	"Flags:\n  --dry-run[=server]   the server checks the change and stores nothing;\n"        \
	"                       prints what would be done, \"(server dry run)\"\n"                 \
	"  --dry-run=client     sends no write: what the client can tell, \"(dry run)\"\n"         \
	"  --dry-run=none       the default: do it\n\n"

/* Each command's own help: its flags and examples (rezusctl help COMMAND, COMMAND --help). */
static const struct detail {
	const char *name;
	const char *text;
} details[] = {
	{ "get",
	  "Flags:\n  -o table|wide|json|yaml|name|jsonpath=TEMPLATE|custom-columns=COLUMNS\n"
	  "  -w, --watch   -l, --selector SEL   --field-selector SEL   -t TENANT   -A\n\n"
	  "Examples:\n  rezusctl get tenants\n  rezusctl get ng -t demo -o wide\n"
	  "  rezusctl get tenant demo -o yaml\n"
	  "  rezusctl get tenants -o jsonpath='{.items[*].metadata.name}'\n"
	  "  rezusctl get ng -t demo -o custom-columns=NAME:.metadata.name,COUNT:.spec.count\n"
	  "  rezusctl get machines -t demo -w\n" },
	{ "describe", "Examples:\n  rezusctl describe tenant demo\n"
	              "  rezusctl describe ng cp -t demo\n  rezusctl describe run RUN -t demo\n" },
	{ "apply", "Every document is checked, then dry-run by the server (?dryRun=All), before\n"
	           "any is written: a set with one bad document changes nothing.\n\n" DRY_RUN_HELP
	           "Examples:\n  rezusctl apply -f examples/sim/\n"
	           "  rezusctl apply -f tenant.yaml -f workers.yaml\n"
	           "  rezusctl apply -f examples/sim/ --dry-run\n"
	           "  cat ng.yaml | rezusctl apply -f -\n" },
	{ "create", DRY_RUN_HELP "Examples:\n  rezusctl create -f examples/sim/1-tenant.yaml\n"
	                         "  rezusctl create -f examples/sim/ --dry-run=client\n" },
	{ "delete", DRY_RUN_HELP
	  "Examples:\n  rezusctl delete tenant demo\n  rezusctl delete ng workers -t demo\n"
	  "  rezusctl delete -f examples/sim/\n" },
	{ "edit", "A refused edit (bad YAML, or the server's validation) opens again with the\n"
	          "reason on top as # lines; saving it unchanged or empty gives up (exit 1) and\n"
	          "keeps a copy of the changes in $TMPDIR (or /tmp), saying where.\n\n"
	          "Examples:\n  EDITOR=nano rezusctl edit ng workers -t demo\n" },
	{ "scale",
	  DRY_RUN_HELP "Examples:\n  rezusctl scale nodegroup workers --replicas 3 -t demo\n"
	               "  rezusctl scale ng workers --replicas 5 -t demo --dry-run\n" },
	{ "runs", "Examples:\n  rezusctl runs demo\n  rezusctl runs demo -o name\n" },
	{ "logs",
	  "Flags:\n  -f, --follow   until the run ends\n  --raw          tofu's JSON lines\n\n"
	  "Examples:\n  rezusctl logs run-1a2b3c4d -f -t demo\n" },
	{ "plan", "Examples:\n  rezusctl plan demo && rezusctl runs demo\n" },
	{ "reconcile",
	  "The run a change starts by itself, started by hand (trigger manual): after a\n"
	  "failure, or when something was changed outside RezusCloud. One that would\n"
	  "destroy something waits for approval (rezusctl approve), as any apply does.\n\n"
	  "Examples:\n  rezusctl reconcile demo\n  rezusctl reconcile demo && rezusctl runs "
	  "demo\n" },
	{ "approve",
	  "Shows what the run would add, change and destroy. At a terminal it then asks\n"
	  "Approve? [y/N]: only y or yes approves. Elsewhere (a script, a pipe) it approves at\n"
	  "once and the summary goes to stderr.\n\n"
	  "Flags:\n  -y, --yes        approve without asking\n"
	  "  --reason TEXT    why, kept in the Run (status.approvalReason)\n\n"
	  "Examples:\n  rezusctl approve RUN -t demo --reason \"one control plane is enough\"\n"
	  "  rezusctl approve RUN -t demo -y\n" },
	{ "cancel", "Examples:\n  rezusctl cancel RUN -t demo\n" },
	{ "kubeconfig", "Examples:\n  rezusctl kubeconfig demo --merge\n"
	                "  rezusctl kubeconfig demo -o demo.kubeconfig\n" },
	{ "talosconfig", "Examples:\n  rezusctl talosconfig demo -o talosconfig\n" },
	{ "export",
	  "Writes the tenant's generated .tf.json (with a local backend, or the one --backend\n"
	  "names, its settings left to tofu init -backend-config), its current state,\n"
	  "kubeconfig, talosconfig and a README into DIR, made 0700 (files 0600): it holds\n"
	  "secrets. DIR must be new or empty; --force writes over files of the same names.\n"
	  "Edit role on the tenant; audited.\n\n"
	  "Examples:\n  rezusctl export demo ./demo-tf && cd demo-tf && tofu init && tofu plan\n"
	  "  rezusctl export demo ./demo-tf --backend s3\n" },
	{ "state", "Examples:\n  rezusctl state list demo\n  rezusctl state rollback demo 3\n" },
	{ "upgrade", "Examples:\n  rezusctl upgrade demo --talos 1.12.1 --dry-run\n"
	             "  rezusctl upgrade demo --kubernetes 1.35.1\n"
	             "  rezusctl upgrade cancel demo UPGRADE\n" },
	{ "login",
	  "Flags:\n  --username U         the user (asked for at a terminal)\n"
	  "  --password-stdin     read the password from stdin\n"
	  "  --oidc               single sign-on at the server's OpenID provider: a browser\n"
	  "                       opens the provider's page and comes back to rezusctl on\n"
	  "                       127.0.0.1; without a browser, a code to enter elsewhere\n"
	  "                       (the device grant) when the provider offers it\n"
	  "  --device             the device grant: a URL and a code to enter on any device\n"
	  "  --no-browser         open nothing: print the URL (the redirect still comes back\n"
	  "                       to 127.0.0.1, so open it on this machine)\n"
	  "  --listen-port N      the redirect's port on 127.0.0.1 (default: any free one)\n"
	  "  --timeout T          how long to wait for the sign-in (90s, 5m; default 5m)\n\n"
	  "Examples:\n  rezusctl login http://127.0.0.1:8080 --username admin\n"
	  "  echo \"$PW\" | rezusctl login https://rezus.example --username ci "
	  "--password-stdin\n"
	  "  rezusctl login https://rezus.example --oidc\n"
	  "  rezusctl login https://rezus.example --oidc --device\n" },
	{ "logout", "Examples:\n  rezusctl logout\n" },
	{ "config",
	  "Examples:\n  rezusctl config get-contexts\n  rezusctl config use-context local\n"
	  "  rezusctl config set-context prod --server https://rezus.example\n" },
	{ "user",
	  "Subcommands:\n  list\n  create NAME --role none|view|edit|admin [--password-stdin]\n"
	  "  delete NAME\n\nExamples:\n  rezusctl user list\n"
	  "  echo \"$PW\" | rezusctl user create alice --role edit --password-stdin\n"
	  "  rezusctl user delete alice\n" },
	{ "token", "Subcommands:\n  list\n  create [--role R] [--description D] [--expires T]\n"
	           "  delete ID\n\n--expires takes a duration (30s, 15m, 12h, 7d, 1h30m) or an "
	           "RFC 3339 time.\n\nExamples:\n  rezusctl token list\n"
	           "  rezusctl token create --role view --description ci --expires 7d\n"
	           "  rezusctl token create --expires 2027-01-01T00:00:00Z\n"
	           "  rezusctl token delete ID\n" },
	{ "password",
	  "Asks for the current password and the new one twice; with --password-stdin\n"
	  "reads the current and the new one from two lines of stdin. A single\n"
	  "sign-on user has no password here.\n\nExamples:\n  rezusctl password\n"
	  "  printf '%s\\n%s\\n' \"$OLD\" \"$NEW\" | rezusctl password --password-stdin\n" },
	{ "audit", "Examples:\n  rezusctl audit --limit 20\n" },
	{ "backup", "Examples:\n  rezusctl backup create\n  rezusctl backup list\n"
	            "  rezusctl backup get NAME -o json\n"
	            "  rezusctl backup tenant demo          # etcd, now\n"
	            "  rezusctl get etcdbackups -t demo\n" },
	{ "api-resources", "Examples:\n  rezusctl api-resources\n" },
	{ "version", "Examples:\n  rezusctl version\n" },
	{ "completion", "Examples:\n  eval \"$(rezusctl completion bash)\"\n"
	                "  rezusctl completion zsh > \"${fpath[1]}/_rezusctl\"\n" },
	{ "boot", "Flags:\n  --platform local|docker|qemu   --data-dir D   --listen ADDR\n"
	          "  --rezuscloud PATH   --password-stdin\n\n"
	          "Examples:\n  rezusctl boot\n  rezusctl boot --listen 0.0.0.0:8443\n"
	          "  rezusctl boot --platform docker\n" },
};

static const struct command *command_named(const char *name);

/* One command's help: usage, what it does, its flags and examples. */
static void command_help(FILE *f, const struct command *cmd)
{
	fprintf(f, "Usage: rezusctl %s%s%s\n\n%s.\n\n", cmd->name, cmd->args[0] ? " " : "",
	        cmd->args, cmd->help);
	for (size_t i = 0; i < sizeof(details) / sizeof(details[0]); i++) {
		if (strcmp(details[i].name, cmd->name) == 0) {
			fprintf(f, "%s\n", details[i].text);
		}
	}
	fprintf(f, "Global flags: see rezusctl --help; every flag: rezusctl(1).\n");
}

/* "Types: tenants (tn), ...": every type of the kind table with its short name, wrapped. */
static void types_line(FILE *f)
{
	size_t n, col = 0;
	const rzc_kind_t *k = rzc_kinds(&n);

	fprintf(f, "\nTypes:");
	col = 6;
	for (size_t i = 0; i < n; i++) {
		char word[64];
		int w = snprintf(word, sizeof(word), " %s%s%s%s%s", k[i].plural,
		                 k[i].shorts[0] ? " (" : "", k[i].shorts, k[i].shorts[0] ? ")" : "",
		                 i + 1 < n ? "," : "");
		if (col + (size_t)w > 86) {
			fprintf(f, "\n      ");
			col = 6;
		}
		fputs(word, f);
		col += (size_t)w;
	}
	fprintf(f, "\n");
}

static void help(FILE *f)
{
	fprintf(f, "Usage: rezusctl [global flags] COMMAND [TYPE] [NAME] [flags]\n\n"
	           "Drive RezusCloud from a terminal, the way kubectl drives Kubernetes.\n\n"
	           "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
	}
	types_line(f);
	fprintf(f,
	        "A NAME may be given as TYPE/NAME, as -o name prints it: logs run/run-1a2b3c4d\n\n"
	        "Global flags:\n"
	        "  --server URL                  the server (env REZUSCLOUD_SERVER)\n"
	        "  --token TOKEN                 an API token (env REZUSCLOUD_TOKEN)\n"
	        "  --context NAME                the context to use\n"
	        "  --config FILE                 the config file (default ~/.config/rezus/config)\n"
	        "  -t, --tenant NAME             the tenant of tenant-scoped types\n"
	        "  -A, --all-tenants             every tenant\n"
	        "  -o, --output FORMAT           table, wide, json, yaml, name, jsonpath=TEMPLATE\n"
	        "                                or custom-columns=HEADER:.path,...\n"
	        "  -l, --selector SELECTOR       label selector\n"
	        "  --field-selector SELECTOR     field selector, e.g. involvedObject.name=web\n"
	        "  --insecure-skip-tls-verify    do not verify the server's certificate\n"
	        "  --certificate-authority FILE  CA bundle for the server's certificate\n"
	        "  -h, --help                    this help\n\n"
	        "Exit status: 0 success, 1 error, 2 usage error.\n"
	        "'rezusctl help COMMAND' (or COMMAND --help) shows a command's flags and "
	        "examples;\nrezusctl(1) has them all.\n");
}

static const struct command *command_named(const char *name)
{
	for (size_t i = 0; name != NULL && i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name) == 0) {
			return &commands[i];
		}
	}
	return NULL;
}

static const char *prog_error_prefix = "rezusctl";

int rzc_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_error_prefix);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'rezusctl --help' for usage.\n");
	return RZC_USAGE;
}

int rzc_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "error: %s%s", rzc_err_where ? rzc_err_where : "",
	        rzc_err_where ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return RZC_ERR;
}

/* completion bash|zsh: commands and types complete; objects come from the server. */
static void flag_words(char *buf, size_t size, bool valued);

/* The completion function (bash's, which zsh runs through bashcompinit): the words before
 * the cursor are read once, as rezusctl parses them (flags anywhere, a valued flag's value
 * skipped), for -t's tenant and the positional words; what to offer follows from the
 * flag before the cursor, else the command and the word's position. */
static const char completion_fn[] =
    "_rezusctl_names() { # TYPE: the names of TYPE's objects (in the command's -t)\n"
    "    COMPREPLY=($(compgen -W \"$(rezusctl get \"$1\" $_rezusctl_t -o name 2>/dev/null |"
    " sed 's|.*/||')\" -- \"$cur\"))\n"
    "}\n"
    "_rezusctl() {\n"
    "    local cur prev i w verb=\"\" type=\"\" npos=0 _rezusctl_t=\"\"\n"
    "    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
    "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
    "    local commands=\"%s\"\n"
    "    local flags=\"%s\"\n"
    "    local types=\"%s\"\n"
    "    local valued=\" %s \"\n"
    "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
    "        w=\"${COMP_WORDS[i]}\"\n"
    "        case \"$w\" in\n"
    "        -t|--tenant) [ $((i + 1)) -lt \"$COMP_CWORD\" ] && _rezusctl_t=\"-t "
    "${COMP_WORDS[i+1]}\" ;;\n"
    "        --tenant=*) _rezusctl_t=\"-t ${w#--tenant=}\" ;;\n"
    "        esac\n"
    "        [ \"$w\" = -f ] && [ \"$verb\" = logs ] && continue # logs -f: follow\n"
    "        case \"$valued\" in *\" $w \"*) i=$((i + 1)); continue ;; esac\n"
    "        case \"$w\" in -?*) continue ;; esac\n"
    "        case $npos in 0) verb=\"$w\" ;; 1) type=\"${w%%%%/*}\" ;; esac\n"
    "        npos=$((npos + 1))\n"
    "    done\n"
    "    case \"$prev\" in\n"
    "    -o|--output) COMPREPLY=($(compgen -W \"table wide json yaml name jsonpath= "
    "custom-columns=\" -- \"$cur\")); return ;;\n"
    "    -t|--tenant) _rezusctl_names tenants; return ;;\n"
    "    -f|--filename|--config|--certificate-authority)\n"
    "        [ \"$verb\" = logs ] || { COMPREPLY=($(compgen -f -- \"$cur\")); return; } ;;\n"
    "    esac\n"
    "    if [ \"$prev\" != -f ] || [ \"$verb\" != logs ]; then\n"
    "        case \"$valued\" in *\" $prev \"*) return ;; esac # another flag's value\n"
    "    fi\n"
    "    case \"$cur\" in -*) COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return ;; "
    "esac\n"
    "    case \"$npos:$verb\" in\n"
    "    0:*) COMPREPLY=($(compgen -W \"$commands help\" -- \"$cur\")) ;;\n"
    "    1:get|1:describe|1:delete|1:edit) COMPREPLY=($(compgen -W \"$types\" -- \"$cur\")) ;;\n"
    "    *:get|*:describe|*:delete|*:edit) _rezusctl_names \"$type\" ;;\n"
    "    1:help) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")) ;;\n"
    "    1:scale) COMPREPLY=($(compgen -W nodegroup -- \"$cur\")) ;;\n"
    "    2:scale) _rezusctl_names nodegroups ;;\n"
    "    1:state) COMPREPLY=($(compgen -W \"list rollback\" -- \"$cur\")) ;;\n"
    "    2:state) _rezusctl_names tenants ;;\n"
    "    1:logs|1:approve|1:cancel) _rezusctl_names runs ;;\n"
    "    1:runs|1:kubeconfig|1:talosconfig|1:plan|1:reconcile|1:upgrade|1:export) _rezusctl_names "
    "tenants ;;\n"
    "    1:completion) COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")) ;;\n"
    "    esac\n"
    "}\n"
    "complete -F _rezusctl rezusctl\n";

int rzc_cmd_completion(rzc_t *c, int argc, char **argv)
{
	char words[1024] = "", flags[2048], valued[2048], types[512] = "";
	size_t n = 0, nkinds, t = 0;
	const rzc_kind_t *k = rzc_kinds(&nkinds);

	(void)c;
	if (argc != 1 || (strcmp(argv[0], "bash") != 0 && strcmp(argv[0], "zsh") != 0)) {
		return rzc_usage("completion: name a shell: bash or zsh");
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s", i ? " " : "",
		                      commands[i].name);
	}
	flag_words(flags, sizeof(flags), false);
	flag_words(valued, sizeof(valued), true);
	for (int pass = 0; pass < 2; pass++) { /* the types of the kind table, then short names */
		for (size_t i = 0; i < nkinds && t < sizeof(types); i++) {
			const char *w = pass == 0 ? k[i].plural : k[i].shorts;
			if (w[0] != '\0') {
				t += (size_t)snprintf(types + t, sizeof(types) - t, "%s%s",
				                      t ? " " : "", w);
			}
		}
	}
	if (strcmp(argv[0], "zsh") == 0) {
		printf("#compdef rezusctl\nautoload -U +X bashcompinit && bashcompinit\n");
	}
	printf("# rezusctl completion: eval \"$(rezusctl completion %s)\"\n", argv[0]);
	printf(completion_fn, words, flags, types, valued);
	return RZC_OK;
}

enum {
	OPT_SERVER = 256,
	OPT_TOKEN,
	OPT_CONTEXT,
	OPT_CONFIG,
	OPT_INSECURE,
	OPT_CA,
	OPT_REPLICAS,
	OPT_PASSWORD_STDIN,
	OPT_USERNAME,
	OPT_MERGE,
	OPT_TALOS,
	OPT_KUBERNETES,
	OPT_DRY_RUN,
	OPT_ROLE,
	OPT_DESCRIPTION,
	OPT_EXPIRES,
	OPT_PLATFORM,
	OPT_DATA_DIR,
	OPT_LISTEN,
	OPT_BINARY,
	OPT_LIMIT,
	OPT_FILENAME,
	OPT_FIELD_SELECTOR,
	OPT_RAW,
	OPT_REASON,
	OPT_OIDC,
	OPT_DEVICE,
	OPT_NO_BROWSER,
	OPT_LISTEN_PORT,
	OPT_TIMEOUT,
	OPT_FORCE,
	OPT_BACKEND,
};

static const struct option long_opts[] = {
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "token", required_argument, NULL, OPT_TOKEN },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "tenant", required_argument, NULL, 't' },
	{ "all-tenants", no_argument, NULL, 'A' },
	{ "output", required_argument, NULL, 'o' },
	{ "selector", required_argument, NULL, 'l' },
	{ "field-selector", required_argument, NULL, OPT_FIELD_SELECTOR },
	{ "watch", no_argument, NULL, 'w' },
	{ "follow", no_argument, NULL, 'F' },
	{ "filename", required_argument, NULL, OPT_FILENAME },
	{ "insecure-skip-tls-verify", no_argument, NULL, OPT_INSECURE },
	{ "certificate-authority", required_argument, NULL, OPT_CA },
	{ "replicas", required_argument, NULL, OPT_REPLICAS },
	{ "password-stdin", no_argument, NULL, OPT_PASSWORD_STDIN },
	{ "username", required_argument, NULL, OPT_USERNAME },
	{ "merge", no_argument, NULL, OPT_MERGE },
	{ "talos", required_argument, NULL, OPT_TALOS },
	{ "kubernetes", required_argument, NULL, OPT_KUBERNETES },
	{ "dry-run", optional_argument, NULL, OPT_DRY_RUN },
	{ "role", required_argument, NULL, OPT_ROLE },
	{ "description", required_argument, NULL, OPT_DESCRIPTION },
	{ "expires", required_argument, NULL, OPT_EXPIRES },
	{ "platform", required_argument, NULL, OPT_PLATFORM },
	{ "data-dir", required_argument, NULL, OPT_DATA_DIR },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "rezuscloud", required_argument, NULL, OPT_BINARY },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "reason", required_argument, NULL, OPT_REASON },
	{ "yes", no_argument, NULL, 'y' },
	{ "oidc", no_argument, NULL, OPT_OIDC },
	{ "device", no_argument, NULL, OPT_DEVICE },
	{ "no-browser", no_argument, NULL, OPT_NO_BROWSER },
	{ "listen-port", required_argument, NULL, OPT_LISTEN_PORT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Every long flag as --name, and the short ones, space-separated: what completion offers;
 * valued: only the flags that take a value (-f is logs' --follow, the others' file). */
static void flag_words(char *buf, size_t size, bool valued)
{
	size_t n = (size_t)snprintf(buf, size, valued ? "-t -o -l -f" : "-t -A -o -l -w -f -y -h");

	for (const struct option *o = long_opts; o->name != NULL && n < size; o++) {
		int w = valued && o->has_arg != required_argument
		            ? 0
		            : snprintf(buf + n, size - n, " --%s", o->name);
		n = w > 0 ? n + (size_t)w : n;
	}
}

static int number(const char *s, long *out)
{
	char *end;

	*out = strtol(s, &end, 10);
	return *s != '\0' && *end == '\0' && *out >= 0 ? 0 : -1;
}

/* A duration of 1 s to 1 h: N, Ns or Nm. */
static int seconds(const char *s, long *out)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (end == s || n <= 0 ||
	    (strcmp(end, "") != 0 && strcmp(end, "s") != 0 && strcmp(end, "m") != 0)) {
		return -1;
	}
	*out = strcmp(end, "m") == 0 ? n * 60 : n;
	return *out <= 3600 && n <= 3600 ? 0 : -1;
}

/* --dry-run's value, as kubectl's: none, server or client; alone, server. -1 when another. */
static int dry_run_mode(const char *value)
{
	static const char *const modes[] = {
		[RZC_DRY_NONE] = "none", [RZC_DRY_SERVER] = "server", [RZC_DRY_CLIENT] = "client"
	};

	if (value == NULL) {
		return RZC_DRY_SERVER;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(value, modes[i]) == 0) {
			return (int)i;
		}
	}
	return -1;
}

static int parse(rzc_t *c, int argc, char **argv, const char *verb)
{
	bool logs = verb != NULL && strcmp(verb, "logs") == 0;
	bool file_out =
	    verb != NULL && (strcmp(verb, "kubeconfig") == 0 || strcmp(verb, "talosconfig") == 0);
	const char *shorts = logs ? "+:t:Ao:l:wfFyh" : "+:t:Ao:l:wf:Fyh";
	int opt;

	/* no permutation ("+"): collect positional words and go on after each */
	optind = 1;
	for (;;) {
		opt = getopt_long(argc, argv, shorts, long_opts, NULL);
		if (opt == -1) {
			if (optind >= argc) {
				break;
			}
			optind++;
			continue;
		}
		switch (opt) {
		case OPT_SERVER:
			c->server = strdup(optarg);
			c->server_given = true;
			break;
		case OPT_TOKEN:
			c->token = strdup(optarg);
			break;
		case OPT_CONTEXT:
			c->context = optarg;
			break;
		case OPT_CONFIG:
			c->config_path = optarg;
			break;
		case 't':
			c->tenant = strdup(optarg);
			c->tenant_given = true;
			break;
		case 'A':
			c->all_tenants = true;
			break;
		case 'o':
			if (file_out) {
				c->out_file = optarg;
			} else if (strcmp(optarg, "table") == 0 || strcmp(optarg, "wide") == 0 ||
			           strcmp(optarg, "json") == 0 || strcmp(optarg, "yaml") == 0 ||
			           strcmp(optarg, "name") == 0 ||
			           strncmp(optarg, "jsonpath=", 9) == 0 ||
			           strncmp(optarg, "custom-columns=", 15) == 0) {
				c->output = optarg;
			} else {
				return rzc_usage("-o %s: use table, wide, json, yaml, name, "
				                 "jsonpath=TEMPLATE or custom-columns=COLUMNS",
				                 optarg);
			}
			break;
		case 'l':
			c->selector = optarg;
			break;
		case OPT_FIELD_SELECTOR:
			c->field_selector = optarg;
			break;
		case 'w':
			c->watch = true;
			break;
		case 'F':
			c->follow = true;
			break;
		case 'f':
			if (logs) {
				c->follow = true;
				break;
			}
			/* fall through */
		case OPT_FILENAME:
			if (c->nfiles >= sizeof(c->files) / sizeof(c->files[0])) {
				return rzc_usage("too many -f");
			}
			c->files[c->nfiles++] = optarg;
			break;
		case OPT_INSECURE:
			c->insecure = true;
			break;
		case OPT_CA:
			c->ca_file = strdup(optarg);
			break;
		case OPT_REPLICAS:
			if (number(optarg, &c->replicas) < 0) {
				return rzc_usage("--replicas %s: expected a number from 0", optarg);
			}
			break;
		case OPT_PASSWORD_STDIN:
			c->password_stdin = true;
			break;
		case OPT_USERNAME:
			c->username = optarg;
			break;
		case OPT_MERGE:
			c->merge = true;
			break;
		case OPT_TALOS:
			c->talos = optarg;
			break;
		case OPT_KUBERNETES:
			c->kubernetes = optarg;
			break;
		case OPT_DRY_RUN:
			if ((c->dry_run = dry_run_mode(optarg)) < 0) {
				return rzc_usage("--dry-run=%s: use none, server or client",
				                 optarg);
			}
			break;
		case OPT_ROLE:
			c->role = optarg;
			break;
		case OPT_DESCRIPTION:
			c->description = optarg;
			break;
		case OPT_EXPIRES:
			c->expires = optarg;
			break;
		case OPT_PLATFORM:
			c->platform = optarg;
			break;
		case OPT_DATA_DIR:
			c->data_dir = optarg;
			break;
		case OPT_LISTEN:
			c->listen = optarg;
			break;
		case OPT_BINARY:
			c->binary = optarg;
			break;
		case OPT_LIMIT:
			if (number(optarg, &c->limit) < 0) {
				return rzc_usage("--limit %s: expected a number", optarg);
			}
			break;
		case OPT_RAW:
			c->raw = true;
			break;
		case OPT_REASON:
			c->reason = optarg;
			break;
		case 'y':
			c->yes = true;
			break;
		case OPT_OIDC:
			c->oidc = true;
			break;
		case OPT_DEVICE:
			c->device = true;
			break;
		case OPT_NO_BROWSER:
			c->no_browser = true;
			break;
		case OPT_LISTEN_PORT:
			if (number(optarg, &c->listen_port) < 0 || c->listen_port < 1 ||
			    c->listen_port > 65535) {
				return rzc_usage("--listen-port %s: expected a port, 1 to 65535",
				                 optarg);
			}
			break;
		case OPT_TIMEOUT:
			if (seconds(optarg, &c->timeout) < 0) {
				return rzc_usage(
				    "--timeout %s: expected a duration, 1s to 1h (90s, "
				    "5m)",
				    optarg);
			}
			break;
		case OPT_FORCE:
			c->force = true;
			break;
		case OPT_BACKEND:
			c->backend = optarg;
			break;
		case 'h':
			if (command_named(verb) != NULL) {
				command_help(stdout, command_named(verb));
			} else {
				help(stdout);
			}
			exit(RZC_OK);
		case ':':
			return rzc_usage("%s needs a value", argv[optind - 1]);
		default:
			return rzc_usage("unknown flag %s", argv[optind - 1]);
		}
	}
	return RZC_OK;
}

/* The positional words of argv (options and their values skipped), in order; -f takes a
 * value (a file) unless the command is logs (follow). The first word is the command. */
static int positionals(int argc, char **argv, const char *verb, char **out)
{
	bool logs = verb != NULL && strcmp(verb, "logs") == 0;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			while (++i < argc) {
				out[n++] = argv[i];
			}
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			out[n++] = argv[i];
			continue;
		}
		if (a[1] == '-') {
			for (const struct option *o = long_opts; o->name != NULL; o++) {
				if (strcmp(a + 2, o->name) == 0 &&
				    o->has_arg == required_argument) {
					i++;
				}
			}
		} else if (a[2] == '\0' && strchr(logs ? "tol" : "tolf", a[1]) != NULL) {
			i++;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	rzc_t c;
	char **words = calloc((size_t)argc + 1, sizeof(*words));
	const char *verb = NULL;
	int n, rc = RZC_USAGE;

	memset(&c, 0, sizeof(c));
	c.replicas = -1;
	c.limit = 50;
	if (words == NULL) {
		return RZC_ERR;
	}
	if (positionals(argc, argv, NULL, words) > 0) {
		verb = words[0];
	}
	if (argc > 1 && (strcmp(argv[1], "--version") == 0)) {
		free(words);
		printf("rezusctl %s\n", PACKAGE_VERSION);
		return RZC_OK;
	}
	rc = parse(&c, argc, argv, verb);
	n = positionals(argc, argv, verb, words);
	if (rc == RZC_OK && n > 0 && strcmp(words[0], "help") == 0) {
		if (n == 1) {
			help(stdout);
			rc = RZC_OK;
		} else if (command_named(words[1]) != NULL) {
			command_help(stdout, command_named(words[1]));
			rc = RZC_OK;
		} else {
			rc = rzc_usage("help: unknown command \"%s\"", words[1]);
		}
	} else if (rc == RZC_OK && n == 0) {
		help(stderr);
		rc = RZC_USAGE;
	} else if (rc == RZC_OK) {
		const struct command *cmd = command_named(words[0]);
		if (cmd == NULL) {
			rc = rzc_usage("unknown command \"%s\"", words[0]);
		} else if (c.dry_run != RZC_DRY_NONE && !cmd->dry_run) {
			rc = rzc_usage(
			    "%s: --dry-run is not supported (apply, create, delete, scale "
			    "and upgrade take it)",
			    cmd->name);
		} else {
			if (c.config_path == NULL) {
				c.config_path = rzc_config_default_path();
			}
			curl_global_init(CURL_GLOBAL_DEFAULT);
			rc = rzc_config_load(&c);
			if (rc == RZC_OK) {
				rzc_resolve(&c);
				rc = cmd->fn(&c, n - 1, words + 1);
				rc = rc == RZC_OK ? rzc_print_rc : rc; /* a bad -o template */
			}
			curl_global_cleanup();
		}
	}
	json_decref(c.config);
	free(c.server);
	free(c.token);
	free(c.tenant);
	free(c.user);
	free(c.ca_file);
	free(words);
	return rc;
}
