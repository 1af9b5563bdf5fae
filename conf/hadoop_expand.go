package conf

import (
	"fmt"
	"strings"
)

// maxSubst is Hadoop's Configuration.MAX_SUBST: the most ${var} substitutions in one value.
const maxSubst = 20

// expandAll recomputes every property's Value from its Raw and the current configuration, and the
// warnings about references that cannot be expanded.
//
// The work is bounded: one value may grow to at most Limits.MaxValueBytes, and all expansions together
// may build at most Limits.MaxTotalBytes of text; past either, values are left as written, with a
// warning, so that a ${var} amplification (a value referring to another many times, chained) costs
// little.
func (c *HadoopConfig) expandAll() {
	lim := c.lim.withDefaults()
	warns := newWarnList(lim.MaxWarnings)
	budget := lim.MaxTotalBytes
	exhausted := false
	for _, name := range c.Names() {
		p := c.props[name]
		if exhausted {
			p.Value = p.Raw
			continue
		}
		v, problem, used := c.substitute(p.Raw, lim.MaxValueBytes, budget)
		budget -= used
		p.Value = v
		if problem != "" {
			warns.addf(problem, "", p.Source, "%s: %s", name, problem)
		}
		if budget <= 0 {
			exhausted = true
			warns.addf("", "", p.Source, "%s: ${var} expansion stopped: expanding the values so far built more than %d bytes, so this and the following properties are left unexpanded (fix: remove the ${} references that repeat other values many times)", name, lim.MaxTotalBytes)
		}
	}
	c.expandWarn = warns.warnings()
}

// substitute expands ${...} references in expr like Hadoop's Configuration.substituteVars:
// repeatedly the leftmost reference is replaced by an environment variable (env.NAME, env.NAME:-def,
// env.NAME-def) or another property's raw value; Java system properties do not exist here. It stops,
// leaving the rest as written, at the first reference it cannot resolve. A value that refers to
// itself is returned unexpanded; more than maxSubst substitutions (a cycle through other
// properties) is reported in problem, with the chain, and expr is returned unexpanded (Hadoop
// throws "Variable substitution depth too large" when it is read).
//
// The result may be at most maxValue bytes, and the substitutions may build at most budget bytes of
// text (used says how many they built); past either, expr is returned unexpanded with a problem.
func (c *HadoopConfig) substitute(expr string, maxValue int, budget int64) (value, problem string, used int64) {
	eval := expr
	var chain []string
	for range maxSubst {
		start, end := findSubVariable(eval)
		if start < 0 {
			return eval, "", used
		}
		name := eval[start:end]
		val, ok := c.resolveVar(name)
		if !ok {
			return eval, "", used
		}
		ref := eval[start-2 : end+1]
		if strings.Contains(val, ref) {
			return expr, fmt.Sprintf("value refers to itself through %s; Hadoop leaves it unexpanded (fix: remove the self-reference)", ref), used
		}
		chain = append(chain, name)
		n := len(eval) - len(ref) + len(val)
		if n > maxValue {
			return expr, fmt.Sprintf("expanding ${%s} would make the value longer than %d bytes; left unexpanded (fix: remove the ${} references that repeat long values)", name, maxValue), used
		}
		used += int64(n)
		if used > budget {
			return expr, "", used
		}
		eval = eval[:start-2] + val + eval[end+1:]
	}
	if start, _ := findSubVariable(eval); start < 0 {
		return eval, "", used
	}
	return expr, fmt.Sprintf("Variable substitution depth too large: %d (chain: %s); Hadoop fails when it reads this property (fix: break the cycle of ${} references)",
		maxSubst, strings.Join(chain, " -> ")), used
}

// resolveVar looks up the variable of one ${name} reference.
func (c *HadoopConfig) resolveVar(name string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, "env."); ok && rest != "" {
		if lookup := c.lookupEnv; lookup != nil {
			for i := 0; i < len(rest); i++ {
				switch {
				case rest[i] == ':' && i < len(rest)-1 && rest[i+1] == '-':
					if v, _ := lookup(rest[:i]); v != "" {
						return v, true
					}
					return rest[i+2:], true
				case rest[i] == '-':
					if v, ok := lookup(rest[:i]); ok {
						return v, true
					}
					return rest[i+1:], true
				}
			}
			if v, ok := lookup(rest); ok {
				return v, true
			}
		}
	}
	if p, ok := c.props[name]; ok {
		return p.Raw, true
	}
	return "", false
}

// findSubVariable finds the name of the leftmost ${name} reference the way Hadoop's
// Configuration.findSubVariable does: the name is non-empty and holds no ' ', '$' or '}'. It returns
// the byte offsets of the name, or -1, -1.
func findSubVariable(eval string) (start, end int) {
	matchStart := 1
	for {
		rel := strings.IndexByte(eval[min(matchStart, len(eval)):], '{')
		if rel < 0 {
			return -1, -1
		}
		brace := min(matchStart, len(eval)) + rel
		if brace+2 >= len(eval) {
			return -1, -1
		}
		if eval[brace-1] != '$' {
			matchStart = brace + 1
			continue
		}
		sub := brace + 1
		restart := false
		for i := sub; i < len(eval); i++ {
			switch eval[i] {
			case '}':
				if i > sub {
					return sub, i
				}
				matchStart, restart = i+1, true
			case ' ', '$':
				matchStart, restart = i+1, true
			}
			if restart {
				break
			}
		}
		if !restart {
			return -1, -1
		}
	}
}
