//! No crate of the workspace has an import cycle between its source files.
//!
//! Each crate root (`src/lib.rs`, `src/main.rs`, `src/bin/*`) is read with `syn` into its tree of
//! modules, following `mod name;` and `#[path]` to the files that hold them.
//! Every path a file names that leads into the crate (`crate::`, `super::`, `self::`, a child
//! module, or a name a `use` bound to one) is resolved through the re-exports on its way to the
//! module that defines the item, and that module's file is a dependency of the naming file.
//! A strongly connected set of more than one file is a cycle, and the test lists each.
//! A file's own inline modules count as part of it; code for tests only (`#[cfg(test)]`) is left
//! out, as tests may reach across the layers they check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The workspace root: this crate's parent folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate sits in the workspace").to_path_buf()
}

/// One module of a crate: where it is written and what it names.
#[derive(Default)]
struct Module {
    /// The file holding it (inline modules share their file).
    file: PathBuf,
    /// Its child modules by name.
    children: BTreeMap<String, usize>,
    /// Its parent, `None` at the root.
    parent: Option<usize>,
    /// The names its `use` items bind, to the paths they stand for (relative to this module).
    bindings: BTreeMap<String, Vec<String>>,
    /// The paths of its glob `use` items.
    globs: Vec<Vec<String>>,
    /// Every path it names that may lead into the crate (relative to this module).
    named: Vec<Vec<String>>,
}

/// A crate's modules, the root first.
struct Tree {
    modules: Vec<Module>,
}

/// The value of a `#[path = "..."]` attribute.
fn path_attribute(attributes: &[syn::Attribute]) -> Option<String> {
    attributes.iter().find(|attribute| attribute.path().is_ident("path")).and_then(|attribute| {
        let syn::Meta::NameValue(value) = &attribute.meta else { return None };
        let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) = &value.value else { return None };
        Some(text.value())
    })
}

/// Whether an item is compiled for tests only (`#[cfg(test)]`): tests may reach across the
/// layers they check, so the graph is the shipped code's, as `cargo modules` draws it.
fn is_test_only(item: &syn::Item) -> bool {
    let attributes = match item {
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Const(item) => &item.attrs,
        _ => return false,
    };
    attributes.iter().any(|attribute| {
        attribute.path().is_ident("cfg") && attribute.parse_args::<syn::Ident>().is_ok_and(|ident| ident == "test")
    })
}

/// Collects the paths a module's items name, outside its nested inline modules.
struct Names<'a> {
    named: &'a mut Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            self.named.push(path.segments.iter().map(|segment| segment.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}
}

/// The leaves of a `use` tree: (bound name or `None` for a glob, the full path).
fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, found: &mut Vec<(Option<String>, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_leaves(&path.tree, prefix, found);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let ident = name.ident.to_string();
            if ident == "self" {
                found.push((prefix.last().cloned(), prefix.clone()));
            } else {
                let mut full = prefix.clone();
                full.push(ident.clone());
                found.push((Some(ident), full));
            }
        }
        syn::UseTree::Rename(rename) => {
            let mut full = prefix.clone();
            let ident = rename.ident.to_string();
            if ident != "self" {
                full.push(ident);
            }
            found.push((Some(rename.rename.to_string()), full));
        }
        syn::UseTree::Glob(_) => found.push((None, prefix.clone())),
        syn::UseTree::Group(group) => {
            for item in &group.items {
                use_leaves(item, prefix, found);
            }
        }
    }
}

impl Tree {
    /// Reads the crate whose root file is `root`.
    fn read(root: &Path) -> Tree {
        let mut tree = Tree { modules: vec![Module { file: root.to_path_buf(), ..Module::default() }] };
        let text = std::fs::read_to_string(root).expect("the root file reads");
        let file = syn::parse_file(&text).unwrap_or_else(|error| panic!("{} parses: {error}", root.display()));
        let folder = root.parent().expect("a file has a folder").to_path_buf();
        tree.add_items(0, &file.items, &folder);
        tree
    }

    /// Records the items of module `index`, whose own child files live in `folder`.
    fn add_items(&mut self, index: usize, items: &[syn::Item], folder: &Path) {
        for item in items {
            if is_test_only(item) {
                continue;
            }
            match item {
                syn::Item::Use(item) => {
                    let mut leaves = Vec::new();
                    use_leaves(&item.tree, &mut Vec::new(), &mut leaves);
                    for (name, path) in leaves {
                        let module = &mut self.modules[index];
                        module.named.push(path.clone());
                        match name {
                            Some(name) => {
                                module.bindings.insert(name, path);
                            }
                            None => module.globs.push(path),
                        }
                    }
                }
                syn::Item::Mod(item) => self.add_module(index, item, folder),
                other => Names { named: &mut self.modules[index].named }.visit_item(other),
            }
        }
    }

    /// Records the child module `item` of module `parent`.
    fn add_module(&mut self, parent: usize, item: &syn::ItemMod, folder: &Path) {
        let name = item.ident.to_string();
        let index = self.modules.len();
        let parent_file = self.modules[parent].file.clone();
        self.modules.push(Module { parent: Some(parent), ..Module::default() });
        self.modules[parent].children.insert(name.clone(), index);
        if let Some((_, items)) = &item.content {
            self.modules[index].file = parent_file;
            let inner = match path_attribute(&item.attrs) {
                Some(path) => folder.join(path),
                None => folder.join(&name),
            };
            self.add_items(index, items, &inner);
            return;
        }
        let file = match path_attribute(&item.attrs) {
            Some(path) => parent_file.parent().expect("a file has a folder").join(path),
            None if folder.join(format!("{name}.rs")).exists() => folder.join(format!("{name}.rs")),
            None => folder.join(&name).join("mod.rs"),
        };
        let text = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{} reads", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|error| panic!("{} parses: {error}", file.display()));
        let stem = file.file_stem().expect("a file has a name").to_string_lossy().into_owned();
        let child_folder = if stem == "mod" {
            file.parent().expect("a file has a folder").to_path_buf()
        } else {
            file.with_extension("")
        };
        self.modules[index].file = file;
        self.add_items(index, &parsed.items, &child_folder);
    }

    /// The module a path's first segment leads to from module `at`, and whether the first
    /// segment was consumed.
    fn start(&self, at: usize, first: &str) -> Option<usize> {
        match first {
            "crate" => Some(0),
            "self" => Some(at),
            "super" => self.modules[at].parent,
            name => self.modules[at].children.get(name).copied(),
        }
    }

    /// The module defining what `path`, named in module `at`, stands for; `None` when the path
    /// leads outside the crate.
    fn resolve(&self, at: usize, path: &[String], depth: usize) -> Option<usize> {
        if depth > 32 || path.is_empty() {
            return None;
        }
        let mut current = match self.start(at, &path[0]) {
            Some(module) => module,
            None => {
                let bound = self.modules[at].bindings.get(&path[0])?;
                let mut whole = bound.clone();
                whole.extend_from_slice(&path[1..]);
                return self.resolve(at, &whole, depth + 1);
            }
        };
        for (index, segment) in path.iter().enumerate().skip(1) {
            if segment == "super" {
                current = self.modules[current].parent?;
                continue;
            }
            if segment == "self" {
                continue;
            }
            if let Some(&child) = self.modules[current].children.get(segment) {
                current = child;
                continue;
            }
            if let Some(bound) = self.modules[current].bindings.get(segment) {
                let mut whole = bound.clone();
                whole.extend_from_slice(&path[index + 1..]);
                return self.resolve(current, &whole, depth + 1).or(Some(current));
            }
            for glob in &self.modules[current].globs {
                let mut whole = glob.clone();
                whole.extend_from_slice(&path[index..]);
                if let Some(found) = self.resolve(current, &whole, depth + 1)
                    && found != current
                    && self.defines(found, segment)
                {
                    return Some(found);
                }
            }
            return Some(current);
        }
        Some(current)
    }

    /// Whether module `index` defines or re-exports `name` (what a glob brings).
    fn defines(&self, index: usize, name: &str) -> bool {
        let module = &self.modules[index];
        if module.children.contains_key(name) || module.bindings.contains_key(name) {
            return true;
        }
        let text = std::fs::read_to_string(&module.file).unwrap_or_default();
        ["struct", "enum", "fn", "trait", "type", "const", "static", "union"]
            .iter()
            .any(|keyword| text.contains(&format!("{keyword} {name}")))
    }

    /// The file-to-file dependencies.
    fn edges(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for (from, to, _) in self.named_edges() {
            edges.entry(from.clone()).or_default();
            if let Some(to) = to {
                edges.entry(from).or_default().insert(to);
            }
        }
        edges
    }

    /// Each path named in a file with the other file it leads to, if any.
    fn named_edges(&self) -> Vec<(PathBuf, Option<PathBuf>, String)> {
        let mut found = Vec::new();
        for (index, module) in self.modules.iter().enumerate() {
            found.push((module.file.clone(), None, String::new()));
            for path in &module.named {
                if let Some(target) = self.resolve(index, path, 0) {
                    let file = &self.modules[target].file;
                    if file != &module.file {
                        found.push((module.file.clone(), Some(file.clone()), path.join("::")));
                    }
                }
            }
        }
        found
    }
}

/// The strongly connected sets of more than one file (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        next: usize,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a PathBuf) {
        state.index.insert(node, state.next);
        state.low.insert(node, state.next);
        state.next += 1;
        state.stack.push(node);
        state.on_stack.insert(node);
        let empty = BTreeSet::new();
        let targets = state.edges.get(node).unwrap_or(&empty);
        for target in targets {
            let Some(target) = state.edges.get_key_value(target).map(|(key, _)| key) else { continue };
            if !state.index.contains_key(target) {
                visit(state, target);
                let low = state.low[node].min(state.low[target]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(target) {
                let low = state.low[node].min(state.index[target]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut set = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                set.push(member.clone());
                if member == node {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                state.found.push(set);
            }
        }
    }
    let mut state = State {
        edges,
        next: 0,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

/// Every crate root of the workspace's members.
fn roots() -> Vec<PathBuf> {
    let root = workspace();
    let mut found = Vec::new();
    for member in ["pharmapay-core", "pharmapay-store-memory", "pharmapay-store-sqlx", "pharmapay-server", "benches"] {
        let src = root.join(member).join("src");
        for file in ["lib.rs", "main.rs"] {
            if src.join(file).exists() {
                found.push(src.join(file));
            }
        }
        if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() && path.join("main.rs").exists() {
                    found.push(path.join("main.rs"));
                } else if path.extension().is_some_and(|extension| extension == "rs") {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

/// Every cycle of every crate: a line naming its files, sorted, joined by ` <-> `, and the
/// lines of the edges that close it, each with the path that makes it.
fn cycle_lines() -> (Vec<String>, Vec<String>) {
    let base = workspace();
    let short = |file: &PathBuf| file.strip_prefix(&base).unwrap_or(file).display().to_string();
    let mut lines = Vec::new();
    let mut detail = Vec::new();
    for root in roots() {
        let tree = Tree::read(&root);
        for set in cycles(&tree.edges()) {
            let line = set.iter().map(short).collect::<Vec<_>>().join(" <-> ");
            detail.push(line.clone());
            let mut seen = BTreeSet::new();
            for (from, to, path) in tree.named_edges() {
                let Some(to) = to else { continue };
                if set.contains(&from) && set.contains(&to) && seen.insert((from.clone(), to.clone())) {
                    detail.push(format!("    {} -> {} ({path})", short(&from), short(&to)));
                }
            }
            lines.push(line);
        }
    }
    lines.sort();
    (lines, detail)
}

#[test]
fn no_crate_has_an_import_cycle() {
    assert!(roots().len() >= 6, "every crate root is found: {:?}", roots());
    let (found, detail) = cycle_lines();
    assert!(
        found.is_empty(),
        "import cycles; move what both sides share into a file of its own below them:\n{}",
        detail.join("\n")
    );
}

#[test]
fn the_check_sees_a_cycle_through_a_re_export() {
    let folder = std::env::temp_dir().join(format!("pharmapay-cycles-{}", std::process::id()));
    std::fs::create_dir_all(folder.join("family")).unwrap();
    std::fs::write(folder.join("lib.rs"), "mod family;\nmod base;\npub use family::Record;\n").unwrap();
    std::fs::write(folder.join("base.rs"), "pub struct Id;\n").unwrap();
    std::fs::write(folder.join("family/mod.rs"), "mod record;\npub use record::Record;\npub struct Query;\n").unwrap();
    std::fs::write(folder.join("family/record.rs"), "use crate::base::Id;\npub struct Record(Id, super::Query);\n")
        .unwrap();
    let tree = Tree::read(&folder.join("lib.rs"));
    let found = cycles(&tree.edges());
    assert_eq!(found, vec![vec![folder.join("family/mod.rs"), folder.join("family/record.rs")]]);

    // Moved down into a file of its own, the query no longer closes a loop.
    std::fs::write(folder.join("family/mod.rs"), "mod record;\nmod query;\npub use record::Record;\n").unwrap();
    std::fs::write(folder.join("family/query.rs"), "pub struct Query;\n").unwrap();
    std::fs::write(
        folder.join("family/record.rs"),
        "use crate::base::Id;\npub struct Record(Id, super::query::Query);\n",
    )
    .unwrap();
    let tree = Tree::read(&folder.join("lib.rs"));
    assert!(cycles(&tree.edges()).is_empty());
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn the_base_layer_imports_nothing_above_it() {
    let base = workspace().join("pharmapay-core/src/base");
    let tree = Tree::read(&workspace().join("pharmapay-core/src/lib.rs"));
    let mut above = Vec::new();
    let mut files = BTreeSet::new();
    for (from, to, path) in tree.named_edges() {
        if !from.starts_with(&base) {
            continue;
        }
        files.insert(from.clone());
        if let Some(to) = to
            && !to.starts_with(&base)
        {
            above.push(format!("{} names {path}", from.display()));
        }
    }
    assert!(files.len() >= 8, "the base layer's files are read: {files:?}");
    assert!(above.is_empty(), "the base layer reaches above itself:\n{}", above.join("\n"));
}
