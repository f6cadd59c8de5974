//! The settings file (`config.toml`, README "Configuration") as values:
//! its text in, a typed [`Config`] or ONE [`ConfigError`] with the line
//! and the key out. Pure: finding and reading the file is
//! `source::config`; the names this layer cannot know (columns, key
//! bindings, the refresh bounds) are kept with their line, and the layer
//! that knows them checks them and words a bad one as a [`ConfigError`]
//! too. Every table refuses a key it does not know: a misspelt setting is
//! an error, never silently the default.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// A value of the file with the line it is on (1-based) and its key as
/// the file spells it (`keys.main.freeze`), for the error that names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
    pub key: String,
}

impl<T> Located<T> {
    /// An error about this value: its line and key, and `what`.
    pub fn error(&self, what: impl Into<String>) -> ConfigError {
        ConfigError {
            line: Some(self.line),
            key: Some(self.key.clone()),
            what: what.into(),
        }
    }
}

/// What is wrong with the file, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based; `None` when the whole file is at fault (not UTF-8 has
    /// its own line; too big has none).
    pub line: Option<usize>,
    /// The key as the file spells it, dotted below a table.
    pub key: Option<String>,
    pub what: String,
}

impl fmt::Display for ConfigError {
    /// `line 3: key `sort`: ...`; the key and the words are escaped (they
    /// may quote the file, and this goes to a terminal).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let esc = |s: &str| crate::model::tree::text::escape_str(s).into_owned();
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "key `{}`: ", esc(key))?;
        }
        write!(f, "{}", esc(&self.what))
    }
}

/// How CPU % is shown (the `%` key; `--machine-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuUnit {
    /// 100 = one core busy (top's and htop's habit).
    #[default]
    Core,
    /// 100 = every CPU of the machine busy.
    Machine,
}

/// The 16 ANSI colours, by the names the file uses; the terminal's own
/// palette draws them (`ui::theme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ansi {
    Black,
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    /// ANSI 7, "white" in most palettes' names for the dim one.
    Gray,
    /// ANSI 8 (bright black).
    DarkGray,
    LightRed,
    LightGreen,
    LightYellow,
    LightBlue,
    LightMagenta,
    LightCyan,
    /// ANSI 15 (bright white).
    White,
}

impl Ansi {
    pub const ALL: [Self; 16] = [
        Self::Black,
        Self::Red,
        Self::Green,
        Self::Yellow,
        Self::Blue,
        Self::Magenta,
        Self::Cyan,
        Self::Gray,
        Self::DarkGray,
        Self::LightRed,
        Self::LightGreen,
        Self::LightYellow,
        Self::LightBlue,
        Self::LightMagenta,
        Self::LightCyan,
        Self::White,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Black => "black",
            Self::Red => "red",
            Self::Green => "green",
            Self::Yellow => "yellow",
            Self::Blue => "blue",
            Self::Magenta => "magenta",
            Self::Cyan => "cyan",
            Self::Gray => "gray",
            Self::DarkGray => "dark_gray",
            Self::LightRed => "light_red",
            Self::LightGreen => "light_green",
            Self::LightYellow => "light_yellow",
            Self::LightBlue => "light_blue",
            Self::LightMagenta => "light_magenta",
            Self::LightCyan => "light_cyan",
            Self::White => "white",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// A palette slot's colours: "FG" or "FG on BG".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    pub fg: Ansi,
    pub bg: Option<Ansi>,
}

impl Paint {
    /// "black on yellow", "green".
    pub fn parse(s: &str) -> Result<Self, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let colour = |w: &str| {
            Ansi::from_name(w).ok_or_else(|| {
                let names: Vec<&str> = Ansi::ALL.iter().map(|c| c.name()).collect();
                format!("no colour {w:?}; the colours are {}", names.join(", "))
            })
        };
        match words.as_slice() {
            [fg] => Ok(Self {
                fg: colour(fg)?,
                bg: None,
            }),
            [fg, "on", bg] => Ok(Self {
                fg: colour(fg)?,
                bg: Some(colour(bg)?),
            }),
            _ => Err(format!(
                "{s:?} is not a colour: write \"FG\" or \"FG on BG\" (\"black on yellow\")"
            )),
        }
    }
}

impl fmt::Display for Paint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bg {
            Some(bg) => write!(f, "{} on {}", self.fg.name(), bg.name()),
            None => write!(f, "{}", self.fg.name()),
        }
    }
}

/// `[colours]`: off, or the palette's slots that differ from the
/// built-in ones (`None`: the built-in). NO_COLOR still wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colours {
    pub enabled: bool,
    /// Warm figures and warnings.
    pub warm: Option<Paint>,
    /// Hot figures and errors.
    pub hot: Option<Paint>,
    /// Meter fills.
    pub bar: Option<Paint>,
    /// A frozen group's name.
    pub frozen: Option<Paint>,
    /// The filter's match in a name.
    pub matched: Option<Paint>,
    /// The footer's keys.
    pub key: Option<Paint>,
    /// The tree's column titles.
    pub column_header: Option<Paint>,
}

impl Default for Colours {
    fn default() -> Self {
        Self {
            enabled: true,
            warm: None,
            hot: None,
            bar: None,
            frozen: None,
            matched: None,
            key: None,
            column_header: None,
        }
    }
}

/// One `[keys.SCOPE]` line: ACTION = "KEY" or ["KEY", ...]. The names are
/// the keymap's (`app::keymap` checks them), kept here as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebind {
    pub scope: String,
    pub action: String,
    pub keys: Vec<String>,
    pub line: usize,
}

impl Rebind {
    /// An error about this line.
    pub fn error(&self, what: impl Into<String>) -> ConfigError {
        ConfigError {
            line: Some(self.line),
            key: Some(format!("keys.{}.{}", self.scope, self.action)),
            what: what.into(),
        }
    }
}

/// The settings, as the file gives them; `None` where it is silent (the
/// built-in default then, or the command line's).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// Seconds between refreshes, as written (the bounds of `-d` are
    /// checked where they are known).
    pub interval: Option<Located<f64>>,
    /// Column names, in display order.
    pub columns: Option<Located<Vec<Located<String>>>>,
    /// A column name, or "name".
    pub sort: Option<Located<String>>,
    pub sort_descending: Option<bool>,
    pub cpu: Option<CpuUnit>,
    pub colours: Colours,
    pub keys: Vec<Rebind>,
}

/// The most bytes read of a config file: a settings file is a few
/// hundred; anything near this is not one.
pub const MAX_BYTES: usize = 1 << 20;

#[derive(Deserialize)]
#[serde(untagged, expecting = "a number of seconds (2 or 0.5)")]
enum Number {
    Int(i64),
    Float(f64),
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a key (\"F\") or a list of keys ([\"F\", \"f5\"])"
)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawUnits {
    cpu: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawColours {
    enabled: Option<bool>,
    warm: Option<Spanned<String>>,
    hot: Option<Spanned<String>>,
    bar: Option<Spanned<String>>,
    frozen: Option<Spanned<String>>,
    matched: Option<Spanned<String>>,
    key: Option<Spanned<String>>,
    column_header: Option<Spanned<String>>,
}

/// One `[keys.SCOPE]` table: action = key(s).
type RawScope = BTreeMap<Spanned<String>, Spanned<OneOrMany>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    interval: Option<Spanned<Number>>,
    columns: Option<Spanned<Vec<Spanned<String>>>>,
    sort: Option<Spanned<String>>,
    sort_descending: Option<bool>,
    units: Option<RawUnits>,
    colours: Option<RawColours>,
    keys: Option<BTreeMap<String, RawScope>>,
}

/// The most names `columns` may hold: the number of columns that exist
/// (`render::columns::Column::ALL`, which a test there holds to it). A
/// longer list is refused before any name is looked at: each would be
/// an error anyway (unknown or named twice), and a 100,000-name list
/// must not cost a name's work 100,000 times.
pub const MAX_COLUMNS: usize = 9;

/// The 1-based lines of byte offsets in one text, each found by a binary
/// search over where its newlines are: the lines of a file's many values
/// cost O(n log n), not a scan of the text each.
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Self {
        Self(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    fn at(&self, at: usize) -> usize {
        self.0.partition_point(|&nl| nl < at) + 1
    }
}

/// The 1-based line of byte `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    // pieces between newlines: one more than the newlines before `at`
    text.as_bytes()[..at].split(|b| *b == b'\n').count()
}

/// The key a parse error at byte `at` is about: the `key =` on its line
/// or the nearest line above (an array's element), under the nearest
/// `[table]` header above, dotted. `None` when no key is near.
fn key_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let mut key: Option<String> = None;
    let mut table: Option<String> = None;
    for line in text[..line_end].lines().rev() {
        let l = line.trim();
        if l.starts_with('[') {
            let name = l.trim_start_matches('[').split(']').next().unwrap_or("");
            table = Some(name.trim().to_owned());
            break;
        }
        if key.is_none() {
            if let Some((k, _)) = l.split_once('=') {
                let k = k.trim();
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c));
                if plain {
                    key = Some(k.replace(['"', '\''], ""));
                }
            }
        }
    }
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}

/// The file's bytes into settings: UTF-8 (else the line of the first bad
/// byte), TOML, only known keys, values of the right kind.
pub fn parse(bytes: &[u8]) -> Result<Config, ConfigError> {
    if bytes.len() > MAX_BYTES {
        return Err(ConfigError {
            line: None,
            key: None,
            what: format!("larger than {} KiB: not a settings file", MAX_BYTES >> 10),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let good = std::str::from_utf8(&bytes[..at]).unwrap_or("");
        ConfigError {
            line: Some(line_of(good, at)),
            key: None,
            what: "not UTF-8 text".into(),
        }
    })?;
    parse_str(text)
}

/// [`parse`] of text already known to be UTF-8.
pub fn parse_str(text: &str) -> Result<Config, ConfigError> {
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        ConfigError {
            line: e.span().map(|s| line_of(text, s.start)),
            key: e.span().and_then(|_| key_at(text, at)),
            // toml's message is one line of its own words; the file's
            // text is quoted by the line number, not repeated
            what: e.message().trim().to_owned(),
        }
    })?;
    let lines = Lines::of(text);
    let at = |span: std::ops::Range<usize>| lines.at(span.start.min(text.len()));
    let loc = |key: &str, span: std::ops::Range<usize>| (at(span), key.to_owned());
    let mut cfg = Config::default();
    if let Some(v) = raw.interval {
        let (line, key) = loc("interval", v.span());
        let value = match v.into_inner() {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        };
        cfg.interval = Some(Located { value, line, key });
    }
    if let Some(v) = raw.columns {
        let (line, key) = loc("columns", v.span());
        if v.get_ref().len() > MAX_COLUMNS {
            return Err(ConfigError {
                line: Some(line),
                key: Some(key),
                what: format!(
                    "{} names, and there are {MAX_COLUMNS} columns: name each at most once",
                    v.get_ref().len()
                ),
            });
        }
        let names = v
            .into_inner()
            .into_iter()
            .map(|n| {
                let line = at(n.span());
                Located {
                    value: n.into_inner(),
                    line,
                    key: "columns".into(),
                }
            })
            .collect();
        cfg.columns = Some(Located {
            value: names,
            line,
            key,
        });
    }
    if let Some(v) = raw.sort {
        let (line, key) = loc("sort", v.span());
        cfg.sort = Some(Located {
            value: v.into_inner(),
            line,
            key,
        });
    }
    cfg.sort_descending = raw.sort_descending;
    if let Some(cpu) = raw.units.unwrap_or_default().cpu {
        let (line, key) = loc("units.cpu", cpu.span());
        cfg.cpu = Some(match cpu.get_ref().as_str() {
            "core" => CpuUnit::Core,
            "machine" => CpuUnit::Machine,
            other => {
                return Err(ConfigError {
                    line: Some(line),
                    key: Some(key),
                    what: format!(
                    "{other:?}: write \"core\" (100 = one core) or \"machine\" (100 = every CPU)"
                ),
                })
            }
        });
    }
    let c = raw.colours.unwrap_or_default();
    let paint = |name: &str, v: Option<Spanned<String>>| -> Result<Option<Paint>, ConfigError> {
        let Some(v) = v else { return Ok(None) };
        Paint::parse(v.get_ref())
            .map(Some)
            .map_err(|what| ConfigError {
                line: Some(at(v.span())),
                key: Some(format!("colours.{name}")),
                what,
            })
    };
    cfg.colours = Colours {
        enabled: c.enabled.unwrap_or(true),
        warm: paint("warm", c.warm)?,
        hot: paint("hot", c.hot)?,
        bar: paint("bar", c.bar)?,
        frozen: paint("frozen", c.frozen)?,
        matched: paint("matched", c.matched)?,
        key: paint("key", c.key)?,
        column_header: paint("column_header", c.column_header)?,
    };
    for (scope, table) in raw.keys.unwrap_or_default() {
        for (action, keys) in table {
            let line = at(action.span());
            let keys = match keys.into_inner() {
                OneOrMany::One(k) => vec![k],
                OneOrMany::Many(ks) => ks,
            };
            cfg.keys.push(Rebind {
                scope: scope.clone(),
                action: action.into_inner(),
                keys,
                line,
            });
        }
    }
    // in the file's order, so the first conflict reported is the first
    // one written
    cfg.keys.sort_by_key(|r| r.line);
    Ok(cfg)
}

/// `text` with its top-level `columns` set to `names` and every other
/// line as it was (comments too): the `columns = [...]` it has is
/// replaced where it stands, or one is put before the first `[table]`.
/// The result is parsed again, so a file this makes is one cgtop reads.
pub fn with_columns(text: &str, names: &[&str]) -> Result<String, ConfigError> {
    #[derive(Deserialize)]
    struct Only {
        columns: Option<Spanned<toml::Value>>,
    }
    parse_str(text)?;
    let line = format!(
        "columns = [{}]",
        names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let only: Only = toml::from_str(text).map_err(|e| ConfigError {
        line: e.span().map(|s| line_of(text, s.start)),
        key: None,
        what: e.message().trim().to_owned(),
    })?;
    let out = if let Some(v) = only.columns {
        let span = v.span();
        let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        format!("{}{line}{}", &text[..start], &text[span.end..])
    } else {
        {
            // before the first table: a key after a header is the table's
            let mut at = text.len();
            let mut pos = 0;
            for l in text.split_inclusive('\n') {
                if l.trim_start().starts_with('[') {
                    at = pos;
                    break;
                }
                pos += l.len();
            }
            let (head, tail) = text.split_at(at);
            let sep = if head.is_empty() || head.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            let gap = if tail.is_empty() { "" } else { "\n" };
            format!("{head}{sep}{line}\n{gap}{tail}")
        }
    };
    parse_str(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse(text.as_bytes()) {
            Ok(c) => panic!("parsed: {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_key() {
        let text = r#"
interval = 2
columns = ["cpu", "psi"]
sort = "psi"
sort_descending = false
[units]
cpu = "machine"
[colours]
enabled = true
warm = "black on light_yellow"
bar = "blue"
[keys.main]
freeze = "F"
kill = ["ctrl-k", "F9"]
"#;
        let c = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            c.interval.as_ref().map(|i| (i.value, i.line)),
            Some((2.0, 2))
        );
        let cols: Vec<&str> = c.columns.as_ref().map_or(vec![], |c| {
            c.value.iter().map(|n| n.value.as_str()).collect()
        });
        assert_eq!(cols, ["cpu", "psi"]);
        assert_eq!(c.sort.as_ref().map(|s| s.value.as_str()), Some("psi"));
        assert_eq!(c.sort_descending, Some(false));
        assert_eq!(c.cpu, Some(CpuUnit::Machine));
        assert_eq!(
            c.colours.warm,
            Some(Paint {
                fg: Ansi::Black,
                bg: Some(Ansi::LightYellow)
            })
        );
        assert_eq!(c.colours.bar.map(|p| p.to_string()), Some("blue".into()));
        assert_eq!(c.colours.hot, None);
        assert_eq!(c.keys.len(), 2);
        assert_eq!(c.keys[0].action, "freeze");
        assert_eq!(c.keys[0].line, 13);
        assert_eq!(c.keys[1].keys, ["ctrl-k", "F9"]);
        let half = parse(b"interval = 0.5").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(half.interval.map(|i| i.value), Some(0.5));
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        assert_eq!(
            err("interval = 1\nintervall = 2\n"),
            format!(
                "line 2: key `intervall`: {}",
                err("interval = 1\nintervall = 2\n")
                    .split_once("key `intervall`: ")
                    .map_or("", |(_, w)| w)
            )
        );
        assert!(err("interval = 1\nintervall = 2\n").contains("unknown field"));
        let e = err("\n\n[colours]\nenabled = \"yes\"\n");
        assert!(e.starts_with("line 4: key `colours.enabled`: "), "{e}");
        let e = err("[colours]\nwarm = \"black on mauve\"\n");
        assert!(
            e.starts_with("line 2: key `colours.warm`: no colour \"mauve\""),
            "{e}"
        );
        let e = err("[units]\ncpu = \"socket\"\n");
        assert!(e.starts_with("line 2: key `units.cpu`: "), "{e}");
        let e = err("[colours]\nblink = true\n");
        assert!(
            e.starts_with("line 2: key `colours.blink`: unknown field"),
            "{e}"
        );
        let e = err("[unitz]\ncpu = \"core\"\n");
        assert!(e.starts_with("line 1: key `unitz`: unknown field"), "{e}");
        let e = err("columns = [\n  \"cpu\",\n  3,\n]\n");
        assert!(e.starts_with("line 3: key `columns`: "), "{e}");
        let e = err("sort = \n");
        assert!(e.starts_with("line 1: "), "{e}");
        let e = err("[keys.main]\nfreeze = 3\n");
        assert!(
            e.starts_with("line 2: key `keys.main.freeze`: a key (\"F\") or a list"),
            "{e}"
        );
        let e = err("interval = \"fast\"\n");
        assert_eq!(e, "line 1: key `interval`: a number of seconds (2 or 0.5)");
    }

    #[test]
    fn bytes_that_are_not_text() {
        let e = err_bytes(b"interval = 1\nsort = \"c\xffpu\"\n");
        assert_eq!(e, "line 2: not UTF-8 text");
        let big = vec![b'#'; MAX_BYTES + 1];
        assert!(err_bytes(&big).starts_with("larger than 1024 KiB"));
    }

    fn err_bytes(b: &[u8]) -> String {
        parse(b).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn the_message_is_escaped() {
        let e = err("[colours]\nwarm = \"\x1b[31m\"\n");
        assert!(!e.contains('\x1b'), "{e:?}");
    }

    #[test]
    fn an_empty_file_is_every_default() {
        assert_eq!(parse(b"").ok(), Some(Config::default()));
        assert_eq!(parse(b"# nothing\n").ok(), Some(Config::default()));
    }

    #[test]
    fn columns_are_replaced_in_place() {
        let text = "# mine\ninterval = 2\ncolumns = [\n  \"cpu\", # the first\n  \"mem\",\n] # kept\n[keys.main]\nfreeze = \"F\"\n";
        let out = with_columns(text, &["psi", "cpu"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            out,
            "# mine\ninterval = 2\ncolumns = [\"psi\", \"cpu\"] # kept\n[keys.main]\nfreeze = \"F\"\n"
        );
        // none yet: before the first table, where it is top-level
        let out = with_columns("interval = 2\n[colours]\nenabled = false\n", &["mem"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            out,
            "interval = 2\ncolumns = [\"mem\"]\n\n[colours]\nenabled = false\n"
        );
        assert_eq!(
            with_columns("", &["cpu"]).ok().as_deref(),
            Some("columns = [\"cpu\"]\n")
        );
        assert_eq!(
            with_columns("interval = 2", &["cpu"]).ok().as_deref(),
            Some("interval = 2\ncolumns = [\"cpu\"]\n")
        );
        // a file cgtop refuses is not rewritten
        assert!(with_columns("bogus = 1\n", &["cpu"]).is_err());
    }
}
