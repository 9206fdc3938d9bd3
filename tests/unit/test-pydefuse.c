/* SPDX-License-Identifier: ISC */
/*
 * test-pydefuse.c: what the python scanner says a cell defines and reads
 * (common/pydefuse.c, docs/decisions/072), snippet by snippet.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/common.h"

/* The names of v, space-separated, sorted. */
static char *
joined(const char **v, size_t n)
{
	static char	buf[2][4096];
	static int	k;
	char		*b = buf[k++ % 2];
	size_t		 i;

	size_t		 len = 0;

	b[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(b + len, sizeof buf[0] - len, "%s%s",
		    i > 0 ? " " : "", v[i]);
	return (b);
}

static void
check(const char *src, const char *defs, const char *uses, int flags)
{
	struct pydefuse	*du;

	du = pydefuse_scan(src, strlen(src));
	cr_expect_str_eq(joined(du->defs, du->ndefs), defs,
	    "defs [%s] of:\n%s\n", joined(du->defs, du->ndefs), src);
	cr_expect_str_eq(joined(du->uses, du->nuses), uses,
	    "uses [%s] of:\n%s\n", joined(du->uses, du->nuses), src);
	cr_expect_eq(du->flags, flags, "flags %d of:\n%s\n", du->flags, src);
	pydefuse_free(du);
}

Test(pydefuse, assignments)
{
	check("x = 1\n", "x", "", 0);
	check("x = y + 1\n", "x", "y", 0);
	check("x = x + 1\n", "x", "x", 0);
	check("x += 1\n", "x", "x", 0);
	check("a, (b, *c) = f()\n", "a b c", "f", 0);
	check("[a, b] = pair\n", "a b", "pair", 0);
	check("a = b = c\n", "a b", "c", 0);
	check("d[k] = v\n", "", "d k v", 0);
	check("obj.attr = v\n", "", "obj v", 0);
	check("obj.attr.deep += n\n", "", "n obj", 0);
	check("x: int = 5\n", "x", "int", 0);
	check("y: List[int]\n", "y", "List int", 0);
	check("x = 1\nprint(x)\n", "x", "print", 0);
	check("print(x)\nx = 1\n", "x", "print x", 0);
	check("x = 1; y = x\n", "x y", "", 0);
	check("del a, b[0]\n", "a", "a b", 0);
	check("x == y\n", "", "x y", 0);
	check("x = y if c else z\n", "x", "c y z", 0);
}

Test(pydefuse, imports)
{
	check("import os\n", "os", "", 0);
	check("import os.path, numpy as np\n", "np os", "", 0);
	check("from collections import OrderedDict, defaultdict as dd\n",
	    "OrderedDict dd", "", 0);
	check("from . import sibling\n", "sibling", "", 0);
	/*
	 * "as" before what is not a name binds nothing; fuzz-pydefuse
	 * found an empty name bound (its corpus keeps the input,
	 * import_as_junk).
	 */
	check("import numpy as 1\n", "", "", 0);
	check("from pkg.mod import (a,\n    b as c,\n)\n", "a c", "", 0);
	check("from numpy import *\n", "", "",
	    PYDEFUSE_WILDCARD | PYDEFUSE_NOLINT);
	check("import pandas as pd\ndf = pd.read_csv(path)\n", "df pd",
	    "path", 0);
}

Test(pydefuse, definitions)
{
	check("def f(a, b=c, *args, d: T = e, **kw) -> R:\n"
	    "    return a + b + g(args, kw) + d\n",
	    "f", "R T c e g", 0);
	check("def f():\n    return f()\n", "f", "", 0);
	check("def f():\n    return helper()\ndef helper():\n    pass\n",
	    "f helper", "", 0);
	check("def f():\n    y = 1\n    return y + z\n", "f", "z", 0);
	check("def f(): return q\n", "f", "q", 0);
	check("class C(Base, metaclass=Meta):\n    x = 1\n"
	    "    def m(self):\n        return self.x + other\n",
	    "C", "Base Meta other", 0);
	check("@decorate(arg)\ndef f():\n    pass\n", "f", "arg decorate", 0);
	check("async def main():\n    await go()\n", "main", "go", 0);
	check("def outer():\n    v = 1\n    def inner():\n"
	    "        return v + w\n    return inner\n", "outer", "w", 0);
	check("def f():\n    global G\n    G = 1\n", "G f", "", 0);
	check("def f(x):\n    return x\nprint(x)\n", "f", "print x", 0);
}

Test(pydefuse, blocks)
{
	check("for i in range(n):\n    total += i\n", "i total", "n range total",
	    0);
	check("for k, v in d.items():\n    print(k, v)\n", "k v", "d print", 0);
	check("with open(p) as fh, lock:\n    data = fh.read()\n",
	    "data fh", "lock open p", 0);
	check("with (open(a) as f, open(b) as g):\n    pass\n", "f g",
	    "a b open", 0);
	check("try:\n    import fast\nexcept ImportError as e:\n"
	    "    fast = None\n", "e fast", "ImportError", 0);
	/* A conditional definition hides no later read. */
	check("if c:\n    x = 1\nprint(x)\n", "x", "c print x", 0);
	check("if c: x = 1\nprint(x)\n", "x", "c print x", 0);
	check("while (line := next_line()):\n    handle(line)\n", "line",
	    "handle next_line", 0);
	check("match cmd:\n    case Point(x=0, y=yy):\n        use(yy)\n"
	    "    case [a, *rest] if a > 0:\n        pass\n    case Color.RED:\n"
	    "        pass\n",
	    "a rest yy", "Color Point a cmd use yy", 0);
	check("match = re.match(p, s)\n", "match", "p re s", 0);
	check("case = 1\nmatch(x)\n", "case", "match x", 0);
}

Test(pydefuse, expressions)
{
	check("print(f(x=1, y=z))\n", "", "f print z", 0);
	check("v = a.b.c\n", "v", "a", 0);
	check("sq = [x * x for x in xs if x > lim]\n", "sq", "lim xs", 0);
	check("m = {k: v for k, v in pairs}\n", "m", "pairs", 0);
	check("s = sum(i for i in items)\n", "s", "items sum", 0);
	check("g = [[y for y in row] for row in grid]\n", "g", "grid", 0);
	check("f = lambda a, b=dflt: a + b + c\n", "f", "c dflt", 0);
	check("sorted(xs, key=lambda t: t[1])\n", "", "sorted xs", 0);
	check("h = (lambda: q)()\n", "h", "q", 0);
	check("if (n := len(a)) > 10:\n    pass\n", "n", "a len", 0);
	check("x = 1 if y else None\n", "x", "y", 0);
	check("x = 1.5e-3 + 0x1F + 1_000j\n", "x", "", 0);
	check("t = ...\n", "t", "", 0);
	check("print(not a and b or c is None)\n", "", "a b c print", 0);
}

Test(pydefuse, strings_and_comments)
{
	check("s = 'x + y'  # z = 1\n", "s", "", 0);
	check("s = \"\"\"\nz = 1\nprint(w)\n\"\"\"\n", "s", "", 0);
	check("s = r'\\' + b\"q\"\n", "s", "", 0);
	check("s = f'{a} and {b!r:>{width}} {{c}}'\n", "s", "a b width", 0);
	check("s = f\"{x=}\"\n", "s", "x", 0);
	check("s = f\"{d['k']} {g(h)}\"\n", "s", "d g h", 0);
	check("s = f'{a == b}'\n", "s", "a b", 0);
	check("s = f'''\n{multi}\n'''\n", "s", "multi", 0);
	check("s = f'{x:{w}.{p}f}'\n", "s", "p w x", 0);
	check("s = rf'{path}\\d'\n", "s", "path", 0);
	check("s = f\"{f'{inner}'}\"\n", "s", "inner", 0);
	check("x = (1 +\n     y)\n", "x", "y", 0);
	check("x = 1 + \\\n    y\n", "x", "y", 0);
	check("x = 1\r\nprint(x)\r\n", "x", "print", 0);
}

Test(pydefuse, ipython)
{
	check("%matplotlib inline\nimport matplotlib.pyplot as plt\n",
	    "plt", "", 0);
	check("!pip install foo\nx = 1\n", "x", "", 0);
	check("files = !ls\n", "files", "", 0);
	check("out = %sx ls\n", "out", "", 0);
	check("%time y = slow(x)\n", "y", "slow x", 0);
	check("%timeit -n 10 f(x)\n", "", "f x", 0);
	check("%%time\nz = compute(a)\n", "z", "a compute", 0);
	check("\n%%timeit\nz = compute(a)\n", "z", "a compute", 0);
	check("%%capture --no-stderr cap\nrun_it()\n", "cap", "run_it", 0);
	check("%%bash\necho $x\n", "", "", PYDEFUSE_NOLINT);
	check("%%writefile a.py\nimport zzz\nq = 1\n", "", "",
	    PYDEFUSE_NOLINT);
	check("%run helpers.py\nuse(h)\n", "", "h use",
	    PYDEFUSE_WILDCARD | PYDEFUSE_NOLINT);
	check("%store -r saved\nprint(saved)\n", "", "print saved",
	    PYDEFUSE_NOLINT);
	check("obj?\nx = 1\n", "x", "", 0);
	check("x = 1 % 2\n", "x", "", 0);
	check("x = a != b\n", "x", "a b", 0);
}

Test(pydefuse, hostile)
{
	/* Unbalanced, unterminated, binary: an answer, the lint off. */
	check("x = (1,\n", "x", "", PYDEFUSE_NOLINT);
	check("s = 'unterminated\ny = z\n", "s y", "z", 0);
	check("s = f'{a\n", "s", "a", 0);
	check(")))\n", "", "", 0);
	check("def\n", "", "", 0);
	check("def (): x\n", "", "x", 0);
	check("def 1(a): a\nclass : b\n", "", "b", 0);
	check("é = naïve\n", "é", "naïve", 0);
	check("", "", "", 0);
	check("\\", "", "", 0);
	check("f'{", "", "", 0);
	check("x = '\\", "x", "", 0);
}

Test(pydefuse, known)
{
	cr_expect(pydefuse_known("print"));
	cr_expect(pydefuse_known("ValueError"));
	cr_expect(pydefuse_known("get_ipython"));
	cr_expect(pydefuse_known("display"));
	cr_expect(pydefuse_known("In"));
	cr_expect(pydefuse_known("_"));
	cr_expect(pydefuse_known("_12"));
	cr_expect(pydefuse_known("_i3"));
	cr_expect(pydefuse_known("__name__"));
	cr_expect_not(pydefuse_known("_x"));
	cr_expect(pydefuse_known("_i"));
	cr_expect(pydefuse_known("_ii"));
	cr_expect_not(pydefuse_known("numpy"));
	cr_expect_not(pydefuse_known("prin"));
	cr_expect_not(pydefuse_known("printx"));
}

Test(pydefuse, lookups)
{
	struct pydefuse	*du;
	const char	*src = "import numpy as np\nout = np.mean(data)\n";

	du = pydefuse_scan(src, strlen(src));
	cr_expect(pydefuse_defines(du, "np"));
	cr_expect(pydefuse_defines(du, "out"));
	cr_expect_not(pydefuse_defines(du, "data"));
	cr_expect(pydefuse_uses(du, "data"));
	cr_expect_not(pydefuse_uses(du, "np"));
	pydefuse_free(du);
}
