/* SPDX-License-Identifier: ISC */
/*
 * test-redact.c: secrets taken out of outputs (agent-redact.c, decision
 * 064): which variable names count, which values are too short or plain
 * to redact, every credential shape and its near misses, the end of a
 * stream held back for the next message, and outputs walked whole with
 * images left alone.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "agent.h"

static char	*red(const char *);
static char	*red_hold(const char *, size_t *);

#define GH	"ghp_0123456789abcdefghijABCDEFGHIJ012345"
#define AWS	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static void
setup(void)
{
	char	*env[] = {
		"HOME=/home/u", "AWS_SECRET_ACCESS_KEY=" AWS,
		"KEY=1", "API_KEY=short", "MONKEY=bananas-and-more-42",
		"AUTH_TYPE=disabled", "DB_PASSWORD=correct-Horse-9",
		"GOOGLE_APPLICATION_CREDENTIALS=/etc/passwd",
		"SSH_AUTH_SOCK=/tmp/ssh-XYZ123/agent.42", "PWD=/home/u/work99",
		"MY_VALUE=not-a-secret-123", NULL
	};

	unsetenv("RUNTIMED_SECRET_NAMES");
	agent_redact_init(env, 0);
}

static void
teardown(void)
{
	agent_redact_free();
}

/* Redacted text, or the text as it was; caller frees. */
static char *
red(const char *s)
{
	size_t	 len, hold;
	char	*t;

	t = agent_redact_text(s, strlen(s), 1, &len, &hold, NULL);
	cr_assert_eq(hold, 0);
	if (t == NULL)
		return (strdup(s));
	cr_assert_eq(strlen(t), len);
	return (t);
}

/* Not final: what may be sent now; *hold what is kept. */
static char *
red_hold(const char *s, size_t *hold)
{
	size_t	 len;
	char	*t;

	t = agent_redact_text(s, strlen(s), 0, &len, hold, NULL);
	if (t == NULL)
		return (strndup(s, strlen(s) - *hold));
	return (t);
}

TestSuite(redact, .init = setup, .fini = teardown);

Test(redact, names)
{
	const char	*yes[] = { "TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
	    "PGPASSWORD", "MYSQL_PWD", "API_KEY", "OPENAI_API_KEY", "HF_TOKEN",
	    "GOOGLE_APPLICATION_CREDENTIALS", "db.password", "npm-auth",
	    "SLACK_BOT_TOKEN", "STRIPE_APIKEY", "ghtoken", NULL };
	const char	*no[] = { "KEYBOARD", "MONKEY", "TURKEY_FARM", "PWD",
	    "OLDPWD", "SSH_AUTH_SOCK", "KEY_FILE", "TOKEN_PATH", "HOME",
	    "XDG_SESSION_ID", "AUTHOR", "GIT_AUTHOR_EMAIL", "KEYRING",
	    "PASSWORD_URL", "TOKENIZERS_PARALLELISM", NULL };
	int		 i;

	for (i = 0; yes[i] != NULL; i++)
		cr_expect(agent_redact_name(yes[i]), "%s", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		cr_expect(!agent_redact_name(no[i]), "%s", no[i]);
}

/* KEY=1, a short value, a plain word, a path: none blanks output. */
Test(redact, values_too_short_or_plain_are_kept)
{
	char	*t;

	cr_assert_eq(agent_redact_count(), 2);
	t = red("1 short disabled /etc/passwd bananas-and-more-42 "
	    "/tmp/ssh-XYZ123/agent.42 not-a-secret-123");
	cr_assert_str_eq(t, "1 short disabled /etc/passwd "
	    "bananas-and-more-42 /tmp/ssh-XYZ123/agent.42 not-a-secret-123");
	free(t);
}

Test(redact, values_by_name)
{
	char	*t;
	size_t	 len, hold, count;

	t = red("key=" AWS "\npw: correct-Horse-9!\n");
	cr_assert_str_eq(t, "key=[redacted: AWS_SECRET_ACCESS_KEY]\n"
	    "pw: [redacted: DB_PASSWORD]!\n");
	free(t);
	t = agent_redact_text("a" AWS AWS, strlen(AWS) * 2 + 1, 1, &len,
	    &hold, &count);
	cr_assert_eq(count, 2);
	free(t);
	cr_assert_null(agent_redact_text("nothing here\n", 13, 1, &len, &hold,
	    &count));
	cr_assert_eq(count, 0);
}

Test(redact, configured_names)
{
	char	*env[] = { "MY_VALUE=not-a-secret-123", "SHORTONE=abc",
	    "PLAIN=abcdefghij", "DB_PASSWORD=correct-Horse-9", NULL };
	char	*t;

	setenv("RUNTIMED_SECRET_NAMES", "MY_VALUE, SHORTONE:PLAIN", 1);
	agent_redact_init(env, 1);
	unsetenv("RUNTIMED_SECRET_NAMES");
	/* Names only (a server's kernel): DB_PASSWORD is not looked at. */
	cr_assert_eq(agent_redact_count(), 2);
	t = red("not-a-secret-123 abc abcdefghij correct-Horse-9");
	cr_assert_str_eq(t, "[redacted: MY_VALUE] abc [redacted: PLAIN] "
	    "correct-Horse-9");
	free(t);
}

Test(redact, shapes)
{
	static const char *cases[][2] = {
		{ "id AKIAIOSFODNN7EXAMPLE.", "id [redacted: AWS access key id]." },
		{ GH, "[redacted: GitHub token]" },
		{ "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
		    "[redacted: GitHub token]" },
		{ "xoxb-123456789012-abcdefABCDEF", "[redacted: Slack token]" },
		{ "k=AIzaSyA-1234567890abcdefghijklmnopqrstu",
		    "k=[redacted: Google API key]" },
		{ "sk-proj-abcdefghijklmnopqrstuvwx",
		    "[redacted: API key]" },
		{ "'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123'",
		    "'[redacted: API key]'" },
		{ "sk_live_abcdefghij0123456789", "[redacted: Stripe key]" },
		{ "Authorization: Bearer abc.DEF-123_456/789+xyz=",
		    "Authorization: Bearer [redacted: bearer token]" },
		{ "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
		    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
		    "t=[redacted: JWT] end" },
		{ "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n"
		    "-----END RSA PRIVATE KEY-----\nb",
		    "a\n[redacted: private key]\nb" },
		{ "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk",
		    "[redacted: private key]" },
		{ NULL, NULL }
	};
	char	*t;
	int	 i;

	for (i = 0; cases[i][0] != NULL; i++) {
		t = red(cases[i][0]);
		cr_expect_str_eq(t, cases[i][1]);
		free(t);
	}
}

/* Ordinary text that looks close: left as it is. */
Test(redact, near_misses)
{
	static const char *same[] = {
		"task-abcdefghijklmnopqrstuvwxyz0123",	/* sk- in a word */
		"AKIAIOSFODNN7EXAMPLEX",		/* 17 after AKIA */
		"AKIA1234",
		"ghp_short",
		"Bearer of bad news",
		"the sk- prefix",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
		"eyJhbGciOiJIUzI1NiJ9 alone",
		"masked: ********",
		NULL
	};
	char	*t;
	int	 i;

	for (i = 0; same[i] != NULL; i++) {
		t = red(same[i]);
		cr_expect_str_eq(t, same[i]);
		free(t);
	}
}

/* A stream's end that may be a secret's start waits for the rest. */
Test(redact, hold_across_messages)
{
	char	*t, *joined;
	size_t	 hold;

	t = red_hold("key: wJalrXUtnFEMI/K7", &hold);
	cr_assert_str_eq(t, "key: ");
	cr_assert_eq(hold, strlen("wJalrXUtnFEMI/K7"));
	free(t);
	joined = strdup("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
	t = red_hold(joined, &hold);
	cr_assert_str_eq(t, "[redacted: AWS_SECRET_ACCESS_KEY]\n");
	cr_assert_eq(hold, 0);
	free(t);
	free(joined);

	t = red_hold("token ghp_0123456789", &hold);
	cr_assert_str_eq(t, "token ");
	free(t);
	t = red_hold("-----BEGIN PRIVATE KEY-----\nMIIE\n", &hold);
	cr_assert_str_eq(t, "");
	free(t);
	t = red_hold("Loss 0.25\n", &hold);
	cr_assert_str_eq(t, "Loss 0.25\n");
	cr_assert_eq(hold, 0);
	free(t);
	/* Final: a partial secret is sent as it is, a partial key cut. */
	t = red("key: wJalrXUtnFEMI/K7");
	cr_assert_str_eq(t, "key: wJalrXUtnFEMI/K7");
	free(t);
}

Test(redact, outputs_walked_images_kept)
{
	struct json_object	*o;
	const char		*s;

	o = json_tokener_parse("{\"output_type\": \"display_data\", "
	    "\"data\": {\"text/html\": \"<b>" GH "</b>\", "
	    "\"application/json\": {\"k\": [\"" AWS "\", 1]}, "
	    "\"image/png\": \"" GH "\"}, \"metadata\": {}}");
	cr_assert_not_null(o);
	cr_assert_eq(agent_redact_json(o), 2);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	cr_assert_not_null(strstr(s, "<b>[redacted: GitHub token]</b>"), "%s",
	    s);
	cr_assert_not_null(strstr(s,
	    "[\"[redacted: AWS_SECRET_ACCESS_KEY]\",1]"), "%s", s);
	cr_assert_not_null(strstr(s, "\"image/png\":\"" GH "\""), "%s", s);
	json_object_put(o);

	o = json_tokener_parse("{\"ename\": \"KeyError\", \"evalue\": \"'"
	    AWS "'\", \"traceback\": [\"\\u001b[31mKeyError\\u001b[0m: '"
	    AWS "'\"]}");
	cr_assert_eq(agent_redact_json(o), 2);
	s = json_object_to_json_string(o);
	cr_assert_null(strstr(s, "wJalrXUtnFEMI"), "%s", s);
	json_object_put(o);
}

/* Any text, cut anywhere: within bounds, and the hold within the text. */
Test(redact, random_texts_cut_anywhere)
{
	static const char	*pieces[] = { "AKIA", "ghp_", "sk-", "Bearer ",
	    "eyJ", ".", "-----BEGIN ", "PRIVATE KEY", "-----END ", "-----",
	    "wJalrXUtnFEMI", AWS, "correct-Horse-9", "xoxb-", "AIza", " ",
	    "\n", "a", "Z", "0", "_", "github_pat_", "\xc3\xa9" };
	char			 buf[512], *t;
	size_t			 len, outlen, hold, np;
	int			 k, j, final;

	np = sizeof pieces / sizeof pieces[0];
	srandom(64);
	for (k = 0; k < 20000; k++) {
		len = 0;
		for (j = random() % 24; j > 0; j--) {
			t = (char *)pieces[random() % np];
			if (len + strlen(t) >= sizeof buf)
				break;
			memcpy(buf + len, t, strlen(t));
			len += strlen(t);
		}
		final = random() % 2;
		t = agent_redact_text(buf, len, final, &outlen, &hold, NULL);
		cr_assert(hold <= len);
		cr_assert(final == 0 || hold == 0);
		free(t);
	}
}
