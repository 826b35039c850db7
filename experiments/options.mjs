// The experiment drivers' command line: `--name value` options taken out of the arguments by
// `opt` (its default when absent) or `all` (every occurrence of a repeatable one); what is
// left in `args` is positional.
export function scriptOptions(argv = process.argv.slice(2)) {
  const args = [...argv];
  const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : def;
  };
  const all = (name) => {
    const out = [];
    for (let v = opt(name, null); v; v = opt(name, null)) out.push(v);
    return out;
  };
  return { args, opt, all };
}
