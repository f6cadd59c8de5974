//! The write dialogs, drawn over the main view. Each shows what Enter will
//! do before anything is written, and its own keys.

use super::Theme;
use crate::app::dialog::columns::ColumnsDialog;
use crate::app::dialog::confirm::{Confirm, Question, Reason};
use crate::app::dialog::controllers::{self, ControllersDialog};
use crate::app::dialog::leaf_fix::LeafFixDialog;
use crate::app::dialog::limits::{Field, FieldKind, LimitsForm, Preview};
use crate::app::dialog::move_picker::MovePicker;
use crate::app::dialog::new_group::NamePrompt;
use crate::app::dialog::raw::RawEditor;
use crate::app::dialog::sort_by::SortByDialog;
use crate::app::keymap::{self, Action, Scope};
use crate::app::text_input::TextInput;
use crate::app::{App, Mode};
use crate::model::tree::text::{escape, escape_str};
use crate::model::write::guard::{typed_prompt, Harm};
use crate::model::write::history::Direction;
use crate::model::write::preflight::Warning;
use crate::model::write::systemd::Presence;
use crate::model::write::WriteKind;
use crate::render::fit::{self, fit, pad, width};
use crate::render::units::bytes_short;
use crate::source::actionlog::{rfc3339_utc, LogPlace};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// A box of `w` x `h` (at most the area) centred in `area`.
fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The widest a dialog gets, borders included.
const MAX_WIDTH: u16 = 86;

/// Columns inside a dialog's borders on a screen of `area`.
fn inner_width(area: Rect) -> usize {
    usize::from(MAX_WIDTH.min(area.width).saturating_sub(2)).max(1)
}

/// Word-wraps `text` to `width` display columns (a group's name in it
/// may be CJK or emoji, two cells a character). A continuation line is indented
/// like the text after the line's leading blanks and bullet ("• ", "  "),
/// so that a wrapped item still reads as one; a word longer than a line
/// is cut where the line ends. Pre-wrapping, rather than leaving it to
/// the paragraph, lets the dialog be exactly as tall as its text.
fn wrap_text(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let body = text.trim_start_matches(' ');
    let lead = text.len() - body.len();
    let bullet = if body.starts_with("• ") { 2 } else { 0 };
    let mut indent = lead + bullet;
    if indent * 2 >= width {
        indent = 0;
    }
    let mut out = Vec::new();
    let mut cur = " ".repeat(lead.min(width.saturating_sub(1)));
    let mut cur_len = cur.len();
    let mut empty = true;
    for word in body.split(' ').filter(|w| !w.is_empty()) {
        let wl = fit::width(word);
        if !empty && cur_len + 1 + wl > width {
            out.push(std::mem::replace(&mut cur, " ".repeat(indent)));
            cur_len = indent;
            empty = true;
        }
        if !empty {
            cur.push(' ');
            cur_len += 1;
        }
        let mut rest = word;
        while cur_len + fit::width(rest) > width {
            let room = width - cur_len;
            // whole clusters that fit, at least one (a wide one on a
            // line of one column)
            let mut cut = 0;
            let mut used = 0;
            for (i, (g, w)) in fit::clusters(rest).enumerate() {
                if i > 0 && used + w > room {
                    break;
                }
                used += w;
                cut += g.len();
            }
            cur.push_str(&rest[..cut]);
            rest = &rest[cut..];
            out.push(std::mem::replace(&mut cur, " ".repeat(indent)));
            cur_len = indent;
        }
        cur.push_str(rest);
        cur_len += fit::width(rest);
        empty = false;
    }
    out.push(cur);
    out
}

/// `text` as wrapped lines of one style.
fn para(text: &str, style: Style, width: usize) -> impl Iterator<Item = Line<'static>> {
    wrap_text(text, width)
        .into_iter()
        .map(move |l| Line::styled(l, style))
}

/// A text input as spans within `width` columns: the text around the
/// cursor, the cursor a `_` at the end or the character under it in
/// reverse video. A long text scrolls, so that the dialog never grows
/// with it and its message stays in sight.
pub(crate) fn input_spans(t: &TextInput, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let (before, after) = t.window(width);
    // the cursor is on a whole grapheme cluster (an accented letter, an
    // emoji with its skin tone)
    let under = fit::clusters(&after).next().map(|(c, _)| c.to_owned());
    match under {
        None => vec![Span::raw(format!("{before}_"))],
        Some(c) => {
            let rest = after[c.len()..].to_owned();
            vec![
                Span::raw(before),
                // underlined too: the limits form draws the whole line of
                // the field being edited in reverse video already
                Span::styled(c, theme.selected.add_modifier(Modifier::UNDERLINED)),
                Span::raw(rest),
            ]
        }
    }
}

/// A label and the text input after it, on one line of `width` columns.
fn input_line(
    label: String,
    label_style: Style,
    t: &TextInput,
    width: usize,
    theme: &Theme,
) -> Line<'static> {
    let room = width.saturating_sub(label.chars().count());
    let mut spans = vec![Span::styled(label, label_style)];
    spans.extend(input_spans(t, room, theme));
    Line::from(spans)
}

/// A row of a list: the selected one is a bar across the whole dialog,
/// so that it shows even where the text is short (" /lab").
fn list_row(text: String, width: usize, selected: bool, theme: &Theme) -> Line<'static> {
    if selected {
        let text = fit(&text, width);
        let pad = width.saturating_sub(fit::width(&text));
        Line::styled(format!("{text}{}", " ".repeat(pad)), theme.selected)
    } else {
        Line::raw(text)
    }
}

/// A box over the main view; its bottom border lists the keys of the
/// dialog's keymap scope.
fn popup(
    f: &mut Frame<'_>,
    area: Rect,
    title: &str,
    lines: Vec<Line<'_>>,
    scope: Scope,
    theme: &Theme,
) {
    let keys = keymap::footer_text(scope);
    let w = MAX_WIDTH.min(area.width);
    // a line the caller did not wrap (a long typed input) takes more rows
    let inner = inner_width(area);
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let h = u16::try_from(rows + 2).unwrap_or(u16::MAX);
    let r = centred(area, w, h);
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme.title))
        .title_bottom(Line::styled(format!(" {keys} "), theme.dim));
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        r,
    );
}

pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    match &app.mode {
        Mode::Controllers(d) => controllers(f, area, d, theme),
        Mode::Columns(d) => columns(f, area, app, d, theme),
        Mode::SortBy(d) => sort_by(f, area, d, app, theme),
        Mode::Limits(form) => limits(f, area, form, theme),
        Mode::Raw(r) => raw(f, area, r, theme),
        Mode::Confirm(c) => confirm(f, area, c, theme),
        Mode::Move(m) => move_picker(f, area, m, app, theme),
        Mode::NewGroup(p) => new_group(f, area, p, theme),
        Mode::LeafFix(l) => leaf_fix(f, area, l, theme),
        Mode::Log { scroll } => log(f, area, app, *scroll, theme),
        Mode::Message { title, lines } => {
            let w = inner_width(area);
            let lines = lines
                .iter()
                .flat_map(|l| para(l, Style::new(), w))
                .collect();
            popup(f, area, title, lines, Scope::Message, theme);
        }
        _ => {}
    }
}

fn controllers(f: &mut Frame<'_>, area: Rect, d: &ControllersDialog, theme: &Theme) {
    let mut lines = vec![
        Line::raw(format!(
            "Controllers {} hands to its children (cgroup.subtree_control):",
            d.group
        )),
        Line::raw(""),
    ];
    for (i, it) in d.items.iter().enumerate() {
        let mark = if it.want { "[x]" } else { "[ ]" };
        let change = match (it.enabled, it.want) {
            (false, true) => "  will enable",
            (true, false) => "  will disable",
            _ => "",
        };
        let note = if it.offered {
            String::new()
        } else {
            // writing it here is ENOENT; the plan is asked for by its key
            format!("  {}", controllers::NOT_AVAILABLE)
        };
        lines.push(list_row(
            format!(" {mark} {:<10}{change}{note}", escape_str(&it.name)),
            inner_width(area),
            i == d.cursor,
            theme,
        ));
    }
    lines.push(Line::raw(""));
    if d.items.iter().any(|i| !i.offered) {
        let plan = format!(
            "{} (a question; nothing is written without y).",
            controllers::plan_words()
        );
        lines.extend(para(&plan, theme.dim, inner_width(area)));
    }
    let changes: Vec<String> = d
        .changes()
        .iter()
        .map(|c| escape_str(&c.to_string()).into_owned())
        .collect();
    let enter = if changes.is_empty() {
        "Nothing to change yet: Space marks a controller.".to_owned()
    } else {
        // all in one write: the kernel applies all of them or none
        format!(
            "Enter writes \"{}\" to cgroup.subtree_control, in one write.",
            changes.join(" ")
        )
    };
    lines.extend(para(&enter, theme.header, inner_width(area)));
    popup(f, area, "controllers", lines, Scope::Controllers, theme);
}

fn columns(f: &mut Frame<'_>, area: Rect, app: &App, d: &ColumnsDialog, theme: &Theme) {
    let mut lines = vec![
        Line::raw("GROUP always shows; a narrow screen drops PSI% SWAP THR% MEM% first."),
        Line::raw(""),
    ];
    for (i, (c, on)) in d.items.iter().enumerate() {
        let mark = if *on { "[x]" } else { "[ ]" };
        lines.push(list_row(
            format!(" {mark} {:<8}{}", c.title(), c.about()),
            inner_width(area),
            i == d.cursor,
            theme,
        ));
    }
    // a ticked column the tree has no room for at this width is said,
    // not left out silently
    let rows = super::tree_rows_for(area.width, area.height);
    let room = match app.zoom {
        crate::app::Zoom::Tree => rows.whole_width,
        _ => rows.split_width,
    };
    let chosen = d.chosen();
    let fitting = crate::render::columns::Column::fitting(&chosen, room);
    let left_out: Vec<&str> = chosen
        .iter()
        .filter(|c| !fitting.contains(c))
        .map(|c| c.title())
        .collect();
    if !left_out.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(para(
            &format!(
                "No room in {room} columns for {}: ticked, shown on a wider terminal.",
                left_out.join(" ")
            ),
            theme.warn,
            inner_width(area),
        ));
    }
    lines.push(Line::raw(""));
    let names: Vec<&str> = d.chosen().iter().map(|c| c.name()).collect();
    lines.extend(para(
        &format!(
            // one line with every column ticked at 80x24: a wrapped
            // second line would fall below the box
            "On the command line: --columns {}",
            names.join(",")
        ),
        theme.header,
        inner_width(area),
    ));
    popup(f, area, "columns", lines, Scope::Columns, theme);
}

fn sort_by(f: &mut Frame<'_>, area: Rect, d: &SortByDialog, app: &App, theme: &Theme) {
    let mut lines = vec![Line::raw("Sort the tree by:"), Line::raw("")];
    for (i, k) in d.items.iter().enumerate() {
        let mark = if *k == app.sort { "(*)" } else { "( )" };
        let about = k.column().map_or("the group's name, A to Z", |c| c.about());
        lines.push(list_row(
            format!(" {mark} {:<8}{about}", k.title()),
            inner_width(area),
            i == d.cursor,
            theme,
        ));
    }
    popup(f, area, "sort by", lines, Scope::SortBy, theme);
}

fn limits(f: &mut Frame<'_>, area: Rect, form: &LimitsForm, theme: &Theme) {
    let mut lines = vec![Line::raw(format!(
        "Limits of {}: type a new value, Enter writes it and reads it back.",
        form.group
    ))];
    if let Some(d) = form.devices.get(form.device) {
        // the rule of the device keys, from the keymap: they work in any
        // field, and only io.max and io.latency use the device
        let keys = [keymap::Action::PrevDevice, keymap::Action::NextDevice]
            .map(|a| keymap::keys_of(Scope::Limits, a).join("/"))
            .join("/");
        let which = if form
            .fields
            .iter()
            .any(|f| matches!(f.kind, FieldKind::V1Throttle(_)))
        {
            "blkio.throttle.*"
        } else {
            "io.max and io.latency"
        };
        lines.push(Line::raw(format!(
            "device for {which} ({keys}): {} ({}){}",
            escape_str(&d.name),
            d.dev,
            if d.partition { " partition" } else { "" }
        )));
    }
    lines.push(Line::raw(""));
    let shown = |fd: &Field| limits_current(fd, form);
    // the current values as wide as the widest, up to what leaves the
    // input 20 columns
    // the files' column: 16 as on cgroup2, wider for v1's long names
    // (memory.memsw.limit_in_bytes)
    let name_w = form
        .fields
        .iter()
        .map(|fd| fd.kind.file().len() + 1)
        .max()
        .unwrap_or(0)
        .max(16);
    let room = inner_width(area).saturating_sub(name_w + 1 + 20).max(10);
    let cur_w = form
        .fields
        .iter()
        .map(|fd| shown(fd).chars().count())
        .max()
        .unwrap_or(0)
        .min(room);
    for (i, fd) in form.fields.iter().enumerate() {
        let cur = shown(fd);
        let sel = i == form.cursor;
        let head = format!("{:<name_w$}{:<cur_w$} ", fd.kind.file(), fit(&cur, cur_w));
        let room = inner_width(area).saturating_sub(head.chars().count());
        let line = if sel {
            let mut spans = vec![Span::raw(head)];
            spans.extend(input_spans(&fd.input, room, theme));
            Line::from(spans)
        } else {
            // not being edited: its start, cut to the row
            let shown: String = fd.input.as_str().chars().take(room).collect();
            Line::raw(format!("{head}{shown}"))
        };
        let line = if fd.current.is_none() {
            line.style(theme.dim)
        } else if sel {
            line.style(theme.selected)
        } else {
            line
        };
        lines.push(line);
    }
    lines.push(Line::raw(""));
    if let Some(fd) = form.fields.get(form.cursor) {
        let w = inner_width(area);
        lines.extend(para(&format!("accepts: {}", fd.kind.hint()), theme.dim, w));
        match &fd.preview {
            Preview::Writes { contents, file } => lines.extend(para(
                &format!(
                    "Enter writes \"{}\" to {}{}",
                    escape_str(contents),
                    escape_str(file),
                    fd.place
                        .as_deref()
                        .map_or_else(String::new, |p| format!(" in {p}"))
                ),
                theme.header,
                w,
            )),
            Preview::Does(what) => lines.extend(para(&format!("Enter {what}"), theme.header, w)),
            Preview::Invalid(e) => lines.extend(para(e, theme.error, w)),
            Preview::Missing(m) => lines.extend(para(&m.to_string(), theme.error, w)),
            Preview::Empty => lines.push(Line::raw("")),
        }
        if let Some(warning) = &fd.warning {
            lines.extend(para(warning, theme.warn, w));
        }
    }
    popup(f, area, "edit limits", lines, Scope::Limits, theme);
}

/// A field's current value in the units its input takes, so that what is
/// shown can be typed back ("1.5G", not 1610612736; `~` marks a figure
/// rounded for want of a short exact one), or why the file is missing.
fn limits_current(fd: &Field, form: &LimitsForm) -> String {
    use crate::cgroupfs::io::{DevId, IoLatency, IoMax};
    use crate::cgroupfs::Limit;
    use crate::render::units::{io_max_typed, limit_typed, usec_typed};
    let Some(c) = fd.current.as_deref() else {
        return match &fd.preview {
            Preview::Missing(m) => m.label().into(),
            _ => "(missing)".into(),
        };
    };
    // the kernel lists nothing where nothing is set
    if c.is_empty() {
        return match fd.kind {
            FieldKind::IoMax | FieldKind::V1Throttle(_) => "(no limit)".into(),
            FieldKind::IoLatency => "(no target)".into(),
            _ => "(empty)".into(),
        };
    }
    let name = |dev: DevId| {
        form.devices
            .iter()
            .find(|d| d.dev == dev)
            .map_or_else(|| dev.to_string(), |d| escape_str(&d.name).into_owned())
    };
    // the form keeps a file's lines joined by " | "
    let text = c.replace(" | ", "\n");
    let typed = match fd.kind {
        FieldKind::Memory(_) => Limit::parse("memory", c).ok().map(limit_typed),
        FieldKind::V1Memory(_) => crate::model::write::v1_limit(c).map(limit_typed),
        FieldKind::IoMax => IoMax::parse(&text).ok().map(|m| {
            m.0.iter()
                .map(|d| format!("{} {}", name(d.dev), io_max_typed(d)))
                .collect::<Vec<_>>()
                .join(" | ")
        }),
        FieldKind::IoLatency => IoLatency::parse(&text).ok().map(|l| {
            l.0.iter()
                .map(|(dev, us)| format!("{} {}", name(*dev), usec_typed(*us)))
                .collect::<Vec<_>>()
                .join(" | ")
        }),
        _ => None,
    };
    typed.unwrap_or_else(|| escape_str(c).into_owned())
}

/// The raw editor's value keeps at least this many cells beside the name.
const RAW_VALUE_ROOM: usize = 16;
/// A name column never narrower than this.
const RAW_NAME_MIN: usize = 12;

fn raw(f: &mut Frame<'_>, area: Rect, r: &RawEditor, theme: &Theme) {
    let mut lines = vec![
        Line::raw(format!(
            "Write one line to an interface file of {}:",
            r.group
        )),
        Line::raw(""),
    ];
    let h = usize::from(area.height.saturating_sub(10)).max(3);
    let start = r
        .cursor
        .saturating_sub(h / 2)
        .min(r.files.len().saturating_sub(h));
    // the value takes what is left of the row: a wrapped row would push
    // the line being typed out of the box
    let w = inner_width(area);
    // the name column is as wide as the longest name (v1 names such as
    // "cpuacct:cgroup.clone_children" are long), but leaves the value
    // room; a name that does not fit is cut with '…', and one space
    // always parts it from the value
    let longest = r
        .files
        .iter()
        .map(|(n, _)| width(&escape_str(n)))
        .max()
        .unwrap_or(0);
    let name_w = longest.min(w.saturating_sub(RAW_VALUE_ROOM + 2).max(RAW_NAME_MIN));
    for (i, (name, cur)) in r.files.iter().enumerate().skip(start).take(h) {
        let name = format!(" {} ", pad(&fit(&escape_str(name), name_w), name_w));
        let room = w.saturating_sub(width(&name));
        lines.push(list_row(
            format!("{name}{}", fit(&escape_str(cur), room)),
            w,
            i == r.cursor,
            theme,
        ));
    }
    lines.push(Line::raw(""));
    match &r.input {
        Some(t) => lines.push(input_line(
            format!("{}: ", escape_str(&r.files[r.cursor].0)),
            theme.title,
            t,
            w,
            theme,
        )),
        None => lines.push(Line::styled(
            "Enter chooses the file, then type the line.",
            theme.dim,
        )),
    }
    popup(
        f,
        area,
        "write a knob",
        lines,
        if r.input.is_some() {
            Scope::RawLine
        } else {
            Scope::RawChoose
        },
        theme,
    );
}

/// A confirmation's text: its opening, one bullet per op, then each
/// reason worded, indented under the list; an owner's command on a line
/// of its own (indented 4).
pub fn confirm_lines(c: &Confirm) -> Vec<String> {
    confirm_items(c)
        .into_iter()
        .map(|i| match i {
            Item::Text(t) => t,
            Item::Command(cmd) => format!("{}{cmd}", " ".repeat(COMMAND_INDENT)),
        })
        .collect()
}

/// A line of a confirmation: text, word-wrapped; or a shell command,
/// wrapped only between its words ([`wrap_command`]).
enum Item {
    Text(String),
    Command(String),
}

/// Where an owner's command starts in the dialog.
const COMMAND_INDENT: usize = 4;

fn confirm_items(c: &Confirm) -> Vec<Item> {
    let mut lines = Vec::new();
    // u or U: which action the ops take back or do again
    if let Some(r) = &c.replay {
        let verb = match r.dir {
            Direction::Undo => "This undoes",
            Direction::Redo => "This redoes",
        };
        lines.push(Item::Text(format!(
            "{verb}: {}",
            r.entry.describe_in(&c.layout)
        )));
    }
    if c.question == Question::EnableAlongPath {
        lines.push(Item::Text(
            "The parent does not hand this controller down. cgtop can enable it along the path, \
             in this order (each step was checked: none is known to be refused):"
                .to_owned(),
        ));
    }
    // one bullet per action: a move made in each hierarchy that holds
    // the group is one, naming them
    lines.extend(
        crate::model::write::sentences(c.ops(), &c.layout)
            .into_iter()
            .map(|s| Item::Text(format!("• {s}"))),
    );
    lines.extend(c.reasons.iter().flat_map(|r| match r {
        // the key of the offer: s, or Ctrl-S where s is typed into the name
        Reason::SystemdOffer(Presence::Ready) => vec![Item::Text(format!(
            "  {} makes it through systemd instead: runtime only, and a daemon-reload keeps it",
            if c.typed.is_some() { "Ctrl-S" } else { "s" }
        ))],
        // who owns it, then its way (the command on its own line, never
        // broken inside a word) and what a direct write leaves it
        // believing (names escaped in the model)
        Reason::Owner(w) => {
            let mut v = Vec::new();
            match &w.command {
                Some(cmd) => {
                    v.push(Item::Text(format!(
                        "  {}; {}'s way:",
                        reason_text(r),
                        w.owner.word()
                    )));
                    v.push(Item::Command(cmd.clone()));
                }
                None => v.push(Item::Text(format!("  {}", reason_text(r)))),
            }
            v.push(Item::Text(format!("  {}", w.words)));
            v
        }
        _ => vec![Item::Text(format!("  {}", reason_text(r)))],
    }));
    if c.y_only() {
        lines.push(Item::Text(
            "Enter does not answer this question: y goes ahead, n cancels.".to_owned(),
        ));
    }
    lines
}

/// The shell words of `cmd` (one line, as `model::write::owner` quotes
/// it): split at the spaces outside quotes and backslash escapes, each
/// word kept whole with its quotes.
fn shell_words(cmd: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote, mut escaped) = (None, None::<char>, false);
    for (i, ch) in cmd.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (ch, quote) {
            ('\\', q) if q != Some('\'') => escaped = true,
            ('\'' | '"', None) => quote = Some(ch),
            (c, Some(q)) if c == q => quote = None,
            (' ', None) => {
                if let Some(s) = start.take() {
                    out.push(&cmd[s..i]);
                }
                continue;
            }
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&cmd[s..]);
    }
    out
}

/// An owner's command within `width` columns, to be read and pasted: on
/// lines of its own from [`COMMAND_INDENT`], broken only between its
/// shell words, each line but the last ending in a backslash (a shell
/// continuation, so that the lines pasted are the one command), the next
/// indented 2 more. A single-quoted JSON word (kubectl's `--patch`) wider
/// than a line is broken after a `{`, `[`, `,` or `:` outside its strings:
/// inside the quotes the line break is JSON's white space, and the patch
/// the same. Any other word wider than a whole line (a 253-character pod
/// name on a narrow screen) is the only one cut, at the line's end.
fn wrap_command(cmd: &str, width: usize) -> Vec<String> {
    let indent = COMMAND_INDENT.min(width / 4);
    let more = indent + 2;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = " ".repeat(indent);
    let mut cur_len = indent;
    let mut empty = true;
    for word in shell_words(cmd) {
        // too wide for a line of its own: a quoted JSON patch is broken
        // where JSON allows white space; lines inside the quotes end
        // without a backslash (it would be the patch's)
        let pieces = if more + fit::width(word) + 2 > width {
            json_pieces(word)
        } else {
            vec![word]
        };
        // what must fit after the words before it: the word, or its
        // first piece
        let wl = fit::width(pieces.first().copied().unwrap_or(word));
        // room for it and, after it, the continuation " \"
        if !empty && cur_len + 1 + wl + 2 > width {
            cur.push_str(" \\");
            lines.push(std::mem::replace(&mut cur, " ".repeat(more)));
            cur_len = more;
            empty = true;
        }
        if !empty {
            cur.push(' ');
            cur_len += 1;
        }
        let mut first = true;
        for piece in pieces {
            let pl = fit::width(piece);
            if !first && cur_len + pl + 2 > width {
                lines.push(std::mem::replace(&mut cur, " ".repeat(more)));
                cur_len = more;
            }
            first = false;
            let mut rest = piece;
            // still wider than a line: cut where the line ends
            while cur_len + fit::width(rest) > width {
                let room = width.saturating_sub(cur_len);
                let (mut cut, mut used) = (0, 0);
                for (i, (g, w)) in fit::clusters(rest).enumerate() {
                    if i > 0 && used + w > room {
                        break;
                    }
                    used += w;
                    cut += g.len();
                }
                cur.push_str(&rest[..cut]);
                rest = &rest[cut..];
                lines.push(std::mem::take(&mut cur));
                cur_len = 0;
            }
            cur.push_str(rest);
            cur_len += fit::width(rest);
        }
        empty = false;
    }
    lines.push(cur);
    lines
}

/// A single-quoted JSON word in pieces, each ending after a `{`, `[`, `,`
/// or `:` outside the JSON's strings (where a line break is white space
/// to JSON); any other word whole.
fn json_pieces(word: &str) -> Vec<&str> {
    if !(word.len() > 2 && word.starts_with("'{") && word.ends_with('\'')) {
        return vec![word];
    }
    let mut out = Vec::new();
    let (mut start, mut in_str, mut esc) = (0, false, false);
    for (i, ch) in word.char_indices() {
        if in_str {
            match (esc, ch) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' | '[' | ',' | ':' => {
                out.push(&word[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&word[start..]);
    out
}

/// A reason in words.
fn reason_text(r: &Reason) -> String {
    match r {
        Reason::BeyondGroup { group, .. } if group.is_root() => format!(
            "{group} is the root: every group of the machine in this hierarchy is affected, \
             not only those under the selected group"
        ),
        Reason::BeyondGroup { group, selected } => format!(
            "{group} is above {selected}: every group under {group} is affected, not only \
             {selected}'s subtree"
        ),
        Reason::Destructive(op) => op.confirm_reason().unwrap_or_default().to_owned(),
        Reason::Raw {
            group,
            file,
            contents,
        } => {
            // the root displays as "/": no "//file"
            let dir = if group.is_root() {
                String::new()
            } else {
                group.to_string()
            };
            format!(
                "writes \"{}\" to {dir}/{}",
                escape_str(contents),
                escape_str(file)
            )
        }
        Reason::WillDie { procs, groups } => format!(
            "{procs} process{} in {groups} group{} will die",
            if *procs == 1 { "" } else { "es" },
            if *groups == 1 { "" } else { "s" }
        ),
        Reason::InitStays => {
            "PID 1 (init) is here: the kernel ignores the kill for it, and it stays".to_owned()
        }
        Reason::NoCgroupKill => {
            "this kernel has no cgroup.kill: cgtop sends SIGKILL to every process of the subtree"
                .to_owned()
        }
        Reason::NoCgroupKillV1 => {
            "cgroup v1 has no cgroup.kill: cgtop freezes the group (freezer.state), sends SIGKILL \
             to every process of the subtree in that hierarchy, never PID 1 or cgtop, then thaws it"
                .to_owned()
        }
        Reason::SystemdMayRevert { unit } => format!(
            "{unit} is managed by systemd: a daemon-reload or unit restart may revert a direct write"
        ),
        Reason::SystemdWay { command } => format!("systemd's way: {command}"),
        Reason::SystemdOffer(Presence::Ready) => {
            "s makes it through systemd instead: runtime only, and a daemon-reload keeps it"
                .to_owned()
        }
        Reason::SystemdOffer(Presence::NotBooted) => {
            "not offered through systemd: this host was not booted with systemd".to_owned()
        }
        Reason::SystemdOffer(Presence::NoSystemctl) => {
            "not offered through systemd: systemctl is not installed".to_owned()
        }
        Reason::SystemdOffer(Presence::BelowRoot) => {
            "not offered through systemd: this view starts below the hierarchy's root (--root), \
             so a group's path here is not its place in systemd's tree"
                .to_owned()
        }
        Reason::ViaSystemd => {
            "made through systemd (systemctl), as the change it replays was".to_owned()
        }
        Reason::Owner(w) => format!("owned by {}", w.who),
        Reason::Preflight(w) => warning_text(w),
    }
}

/// What a write will do, known before it is made (`model::write::preflight`).
fn warning_text(w: &Warning) -> String {
    let b = |n: u64| bytes_short(n);
    let procs = |n: u64| format!("{n} process{}", if n == 1 { "" } else { "es" });
    match w {
        Warning::Reclaim { limit, current } => format!(
            "it uses {} now, over the new limit of {}: the kernel reclaims {} at once (file \
             cache, and swap), and its processes stall while it does",
            b(*current),
            b(*limit),
            b(current - limit)
        ),
        Warning::OomKill {
            limit,
            current,
            unreclaimable,
            procs: n,
            oom_group,
        } => {
            let short = match unreclaimable {
                // `u` is of the excess, not of the whole use
                Some(u) => format!(
                    "{} of the {} over it cannot be reclaimed (anonymous and kernel memory, \
                     with no swap room for it)",
                    b(*u),
                    b(current - limit)
                ),
                None => format!(
                    "how much of the {} over it reclaim can free is not known (memory.stat \
                     was not read)",
                    b(current - limit)
                ),
            };
            let who = if *oom_group {
                format!("all {} at once (memory.oom.group is 1)", procs(*n))
            } else {
                format!(
                    "biggest first, until it fits: up to {} of its subtree",
                    procs(*n)
                )
            };
            let kills = if unreclaimable.is_some() {
                "kills"
            } else {
                "may kill"
            };
            format!(
                "it uses {} now, over the new limit of {}, and {short}: the OOM killer {kills} \
                 its processes, {who}",
                b(*current),
                b(*limit)
            )
        }
        Warning::Throttle { limit, current } => format!(
            "it uses {} now, over memory.high {}: the kernel reclaims hard and throttles its \
             processes (they slow down) while it stays above; nothing is killed",
            b(*current),
            b(*limit)
        ),
        Warning::ForksFail { limit, current } => format!(
            "it has {current} tasks now and the new limit is {limit}: every fork and new \
             thread in it fails until tasks exit; running ones keep running"
        ),
        Warning::CpuStarved {
            quota,
            period,
            used_pct,
        } => {
            let used =
                used_pct.map_or_else(String::new, |u| format!(" (it used {u} % of one CPU)"));
            format!(
                "a quota of {} % of one CPU{used}: its processes run {} ms in every {} ms and \
                 stall the rest, so a shell in it hardly answers",
                fmt_share(*quota, *period),
                fmt_ms(*quota),
                fmt_ms(*period)
            )
        }
    }
}

/// `quota`/`period` as a percentage of one CPU, one decimal below 10.
fn fmt_share(quota: u64, period: u64) -> String {
    let pct = quota as f64 * 100.0 / period.max(1) as f64;
    if pct < 10.0 {
        format!("{pct:.1}")
    } else {
        // the one formatter: a user's largest quota is not 14 digits
        crate::render::units::count_short(Some(pct.round() as u64))
    }
}

/// Microseconds as milliseconds, with a decimal where it matters.
fn fmt_ms(usec: u64) -> String {
    if usec % 1000 == 0 {
        (usec / 1000).to_string()
    } else {
        format!("{:.1}", usec as f64 / 1000.0)
    }
}

fn confirm(f: &mut Frame<'_>, area: Rect, c: &Confirm, theme: &Theme) {
    let w = inner_width(area);
    let mut lines: Vec<Line<'_>> = confirm_items(c)
        .iter()
        .flat_map(|i| -> Vec<Line<'_>> {
            match i {
                Item::Text(t) => para(t, Style::new(), w).collect(),
                Item::Command(cmd) => wrap_command(cmd, w).into_iter().map(Line::raw).collect(),
            }
        })
        .collect();
    let ops = c.ops();
    if let (Some((target, _)), false) = (&c.typed, c.dangers.is_empty()) {
        let harm = ops
            .iter()
            .find(|o| o.group() == target)
            .map_or(Harm::Freeze, Harm::of);
        lines.extend(para(
            &typed_prompt(target, &c.dangers, harm),
            Style::new(),
            w,
        ));
    }
    lines.push(Line::raw(""));
    let scope = match &c.typed {
        Some((target, typed)) => {
            lines.push(input_line(
                format!("type {}: ", target.name_display()),
                theme.warn,
                typed,
                w,
                theme,
            ));
            Scope::ConfirmTyped
        }
        None if c.y_only() => Scope::ConfirmWide,
        None => Scope::Confirm,
    };
    // kill and remove leave nothing to undo
    let final_op = ops.iter().any(|o| o.is_destructive() && !o.can_undo());
    let question = match c.question {
        Question::Write => "confirm",
        Question::EnableAlongPath => "enable along the path",
    };
    let title = if final_op {
        format!("{question} (cannot be undone)")
    } else {
        question.to_owned()
    };
    popup(f, area, &title, lines, scope, theme);
}

fn move_picker(f: &mut Frame<'_>, area: Rect, m: &MovePicker, app: &App, theme: &Theme) {
    let how = if m.threads {
        "Writes cgroup.threads: only this thread moves (^T: the whole process)."
    } else {
        "Writes cgroup.procs: the whole process moves (^T: this thread only)."
    };
    let w = inner_width(area);
    let mut lines: Vec<Line<'_>> = para(
        &format!(
            "Move process {} ({}) into the group chosen below.",
            m.pid,
            // the process list's command line, escaped when it was read
            // (ProcessInfo::cmdline): escaping it again would show `\\e`
            fit(&m.what, 40)
        ),
        Style::new(),
        w,
    )
    .chain(para(how, theme.dim, w))
    .collect();
    if !m.refused.is_empty() {
        let n = m.refused.len();
        let groups = if n == 1 { "group" } else { "groups" };
        let why = if m.threads {
            "outside this thread's threaded domain, or that cannot take it"
        } else {
            "that cannot take processes: they hand a domain controller (memory, io, ...) to \
             their children, or are invalid"
        };
        lines.extend(para(
            &format!("Not listed: {n} {groups} {why}."),
            theme.dim,
            w,
        ));
    }
    lines.extend([
        input_line("filter: ".into(), theme.title, &m.filter, w, theme),
        Line::raw(""),
    ]);
    let h = usize::from(area.height.saturating_sub(11)).max(3);
    let start = m
        .cursor
        .saturating_sub(h / 2)
        .min(m.matches.len().saturating_sub(h));
    let snapshot = app.data.as_ref().map(|d| &d.refresh.snapshot);
    let from = app.start.to_string();
    for (i, p) in m.matches.iter().enumerate().skip(start).take(h) {
        // who the group is first (a container's name), then its path
        // with its end kept
        let known = snapshot
            .and_then(|s| s.find(p))
            .and_then(crate::render::identity::label_of);
        let text = match known {
            Some(l) => {
                let label = l.fit(w / 2);
                let room = w.saturating_sub(crate::render::fit::width(&label) + 3);
                format!(
                    " {label}  {}",
                    crate::render::fit::fit_path(&p.to_string(), room, &from)
                )
            }
            None => format!(" {p}"),
        };
        lines.push(list_row(text, inner_width(area), i == m.cursor, theme));
    }
    if m.matches.is_empty() {
        lines.push(Line::styled(" no group matches", theme.dim));
    }
    popup(f, area, "move a process", lines, Scope::Move, theme);
}

fn new_group(f: &mut Frame<'_>, area: Rect, p: &NamePrompt, theme: &Theme) {
    let w = inner_width(area);
    let mut lines = vec![
        Line::raw(format!("New child group of {}:", p.parent)),
        input_line("name: ".into(), theme.title, &p.input, w, theme),
    ];
    match &p.check {
        Ok(n) => lines.extend(para(
            &match p.parent.join(n) {
                Ok(path) => format!("Enter creates {path}"),
                Err(e) => e.to_string(),
            },
            theme.header,
            w,
        )),
        // nothing typed yet is not an error: say what is accepted
        Err(_) if p.input.is_empty() => lines.extend(para(
            &format!("Type {}.", crate::model::write::input::ACCEPT_NAME),
            theme.dim,
            w,
        )),
        Err(e) => lines.extend(para(e, theme.error, w)),
    }
    popup(f, area, "new group", lines, Scope::NewGroup, theme);
}

fn leaf_fix(f: &mut Frame<'_>, area: Rect, l: &LeafFixDialog, theme: &Theme) {
    let names: Vec<String> = l
        .changes
        .iter()
        .map(|c| {
            let sign = if c.enable { "+" } else { "-" };
            format!("{sign}{}", escape_str(&c.name))
        })
        .collect();
    let w = inner_width(area);
    let plain = Style::new();
    let mut lines: Vec<Line<'_>> = para(
        &format!(
            "{} holds {} process{}; a group that hands a domain controller to its children cannot hold processes itself (no internal process rule, admin guide 2-4-3).",
            l.group,
            l.nr_procs,
            if l.nr_procs == 1 { "" } else { "es" }
        ),
        plain,
        w,
    )
    .collect();
    lines.push(Line::raw(""));
    lines.extend(para("cgtop can fix it: create a leaf child, move every process of the group into it, then write to its cgroup.subtree_control:", plain, w));
    lines.extend(para(&format!("    {}", names.join(" ")), plain, w));
    lines.push(Line::raw(""));
    lines.push(input_line(
        "leaf name: ".into(),
        theme.title,
        &l.leaf,
        w,
        theme,
    ));
    match &l.check {
        Ok(leaf) => match l.group.join(leaf) {
            Ok(path) => lines.extend(para(&format!("-> {path}"), theme.dim, w)),
            Err(e) => lines.extend(para(&e.to_string(), theme.error, w)),
        },
        Err(e) => lines.extend(para(e, theme.error, w)),
    }
    popup(
        f,
        area,
        "EBUSY: move the processes into a leaf?",
        lines,
        Scope::LeafFix,
        theme,
    );
}

fn log(f: &mut Frame<'_>, area: Rect, app: &App, scroll: usize, theme: &Theme) {
    let mut lines = Vec::new();
    if let Some(place) = &app.log_place {
        let w = usize::from(area.width.saturating_sub(4));
        let style = if place.path.is_some() && place.skipped.is_empty() {
            theme.dim
        } else {
            theme.warn
        };
        lines.extend(para(&log_place_text(place), style, w));
    }
    if app.log.is_empty() {
        lines.push(Line::styled("no writes yet in this session", theme.dim));
    }
    let width = usize::from(area.width.saturating_sub(4));
    let stacks = stack_lines(app, width, theme);
    let h = usize::from(area.height.saturating_sub(6))
        .saturating_sub(stacks.len())
        .max(3);
    // an entry with an effect takes two lines; the scrolled-to entry is
    // the last one shown when the ones before it fill the box
    let height = |i: usize| 1 + usize::from(crate::app::writes::effect_words(app, i).is_some());
    let mut start = scroll.min(app.log.len().saturating_sub(1));
    let mut used = if app.log.is_empty() { 0 } else { height(start) };
    while start > 0 && used + height(start - 1) <= h {
        start -= 1;
        used += height(start);
    }
    let mut shown = 0;
    for (i, e) in app.log.iter().enumerate().skip(start) {
        let effect = crate::app::writes::effect_words(app, i);
        shown += 1 + usize::from(effect.is_some());
        if shown > h && i > start {
            break;
        }
        let o = &e.outcome;
        // describe() escapes what it shows; the file, what was written
        // and what was there before are escaped here
        let (file, new) = o.op.as_write().map_or_else(
            || ("(dir)".to_owned(), o.op.describe()),
            |w| {
                (
                    escape_str(&w.file).into_owned(),
                    escape_str(&w.contents).into_owned(),
                )
            },
        );
        let is_move =
            o.op.as_write()
                .is_some_and(|w| matches!(w.kind, WriteKind::MoveProcess { .. }));
        let old = match (o.old_group(), is_move, o.old.as_deref().map(str::trim)) {
            // the group the process left, shown as the tree shows it
            // (escaped once)
            (Some(g), _, _) => g.to_string(),
            (None, true, _) | (None, false, None) => "-".to_owned(),
            // an empty file (no controllers, no io.max lines) said so,
            // not a blank between two spaces
            (None, false, Some("")) => "(empty)".to_owned(),
            (None, false, Some(t)) => escape_str(&t.replace('\n', " | ")).into_owned(),
        };
        let res = match &o.result {
            Ok(()) => "ok".to_owned(),
            Err(err) => err.errno_name().to_owned(),
        };
        // the result right after the time, so that a cut line keeps it;
        // a narrow box shows the time of day only (the log file and a
        // wide box have the whole date)
        let stamp = rfc3339_utc(e.unix_secs);
        let stamp = if width < 100 {
            stamp
                .split_once('T')
                .map_or(stamp.clone(), |(_, t)| t.to_owned())
        } else {
            stamp
        };
        let line = Line::raw(fit(
            &format!("{stamp} {res} {} {file} {old} -> {new}", o.op.group()),
            width,
        ));
        lines.push(if o.result.is_err() {
            line.style(theme.error)
        } else {
            line
        });
        if let Some(words) = effect {
            lines.push(Line::raw(fit(&format!("  effect: {words}"), width)));
        }
    }
    lines.extend(stacks);
    popup(f, area, "action log", lines, Scope::Log, theme);
}

/// The most entries of each stack the log screen lists.
const STACK_SHOWN: usize = 3;

/// The undo and redo stacks under the log, top first: what `u` would
/// undo next and what it writes, then what redo would write again.
fn stack_lines(app: &App, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let h = &app.history;
    if h.undo.is_empty() && h.redo.is_empty() {
        return vec![Line::styled("nothing to undo or redo", theme.dim)];
    }
    let undo_keys = keymap::keys_text(Scope::Main, Action::Undo);
    let redo_keys = keymap::keys_text(Scope::Main, Action::Redo);
    let mut lines = Vec::new();
    for (dir, title) in [
        (Direction::Undo, format!("undo ({undo_keys}), next first:")),
        (Direction::Redo, format!("redo ({redo_keys}), next first:")),
    ] {
        let stack = h.stack(dir);
        if stack.is_empty() {
            lines.push(Line::styled(
                format!("nothing to {}", dir.word()),
                theme.dim,
            ));
            continue;
        }
        lines.push(Line::styled(title, theme.title));
        for e in stack.iter().rev().take(STACK_SHOWN) {
            let text = match dir {
                Direction::Undo => format!(
                    "  {} ({undo_keys} {})",
                    e.describe_in(&app.layout),
                    e.undo_words()
                ),
                Direction::Redo => format!("  {}", e.describe_in(&app.layout)),
            };
            lines.push(Line::raw(fit(&text, width)));
        }
        if stack.len() > STACK_SHOWN {
            lines.push(Line::styled(
                format!("  and {} more", stack.len() - STACK_SHOWN),
                theme.dim,
            ));
        }
    }
    lines
}

/// Where the log file is and, when it is not where the environment said
/// or nowhere, why: "log: /root/.local/state/cgtop/actions.log
/// (XDG_STATE_HOME refused: /home/u is owned by uid 1000, not root)".
fn log_place_text(p: &LogPlace) -> String {
    let show = |p: &std::path::Path| escape(p.as_os_str().as_encoded_bytes()).into_owned();
    let why = p
        .skipped
        .iter()
        .map(|s| format!("{} refused: {}", s.source, s.why))
        .collect::<Vec<_>>()
        .join("; ");
    match (&p.path, why.is_empty()) {
        (Some(path), true) => format!("log: {}", show(path)),
        (Some(path), false) => format!("log: {} ({why})", show(path)),
        (None, true) => "not logged to a file: neither XDG_STATE_HOME nor HOME is set".to_owned(),
        (None, false) => format!("not logged to a file: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{confirm_lines, reason_text, shell_words, wrap_command, wrap_text};
    use crate::app::dialog::confirm::{Confirm, Reason};
    use crate::model::write;
    use crate::model::GroupPath;

    #[test]
    fn reasons_in_words() {
        let raw = |group: &str| Reason::Raw {
            group: GroupPath::new(group),
            file: "cgroup.max.depth".into(),
            contents: "1\n".into(),
        };
        // the root is "/", not "//file"; what is written is escaped
        assert_eq!(
            reason_text(&raw("")),
            "writes \"1\\n\" to /cgroup.max.depth"
        );
        assert_eq!(
            reason_text(&raw("lab")),
            "writes \"1\\n\" to /lab/cgroup.max.depth"
        );
        let die = |procs, groups| reason_text(&Reason::WillDie { procs, groups });
        assert_eq!(die(1, 1), "1 process in 1 group will die");
        assert_eq!(die(2, 3), "2 processes in 3 groups will die");
        let kill = write::kill(&GroupPath::new("lab"));
        assert_eq!(
            reason_text(&Reason::Destructive(kill)),
            "every process in the group and below is killed"
        );
        assert_eq!(
            reason_text(&Reason::SystemdMayRevert {
                unit: "a.service".into()
            }),
            "a.service is managed by systemd: a daemon-reload or unit restart may revert a direct write"
        );
    }

    #[test]
    fn a_wide_name_wraps_in_display_columns() {
        // a confirmation about a group named in CJK and emoji: every line
        // within the dialog's width, no emoji split from its skin tone
        let thumb = "\u{1f44d}\u{1f3fd}";
        let name = format!("/lab/{}{}", "\u{53cc}\u{5bbd}".repeat(12), thumb.repeat(6));
        let text = format!("freeze {name} and every group below it");
        for w in [10, 17, 30, 44] {
            let lines = wrap_text(&text, w);
            for l in &lines {
                assert!(crate::render::fit::width(l) <= w, "{w}: {l:?} in {lines:?}");
                assert!(!l.starts_with('\u{1f3fd}'), "{w}: {lines:?}");
            }
            assert_eq!(lines.concat().replace(' ', ""), text.replace(' ', ""));
        }
    }

    #[test]
    fn preflight_warnings_in_words() {
        use crate::model::write::preflight::Warning;
        let say = |w| reason_text(&Reason::Preflight(w));
        assert_eq!(
            say(Warning::OomKill {
                limit: 10 << 20,
                current: 84 << 20,
                unreclaimable: None,
                procs: 1,
                oom_group: true,
            }),
            "it uses 84.0M now, over the new limit of 10.0M, and how much of the 74.0M over it \
             reclaim can free is not known (memory.stat was not read): the OOM killer may kill \
             its processes, all 1 process at once (memory.oom.group is 1)"
        );
        assert_eq!(
            say(Warning::CpuStarved {
                quota: 1500,
                period: 100_000,
                used_pct: None,
            }),
            "a quota of 1.5 % of one CPU: its processes run 1.5 ms in every 100 ms and stall \
             the rest, so a shell in it hardly answers"
        );
        // the share through the one formatter: never 16 digits
        assert!(say(Warning::CpuStarved {
            quota: 17_592_186_044_415,
            period: 1000,
            used_pct: None,
        })
        .starts_with("a quota of 1.8T % of one CPU"));
        assert!(say(Warning::Throttle {
            limit: 1 << 20,
            current: 2 << 20
        })
        .contains("nothing is killed"));
    }

    #[test]
    fn a_confirmation_lists_its_ops_then_its_reasons() {
        let lab = GroupPath::new("lab");
        let mut c = Confirm::enable_along_path(vec![write::freeze(&lab, true)]);
        assert_eq!(
            confirm_lines(&c),
            [
                "The parent does not hand this controller down. cgtop can enable it along the \
                 path, in this order (each step was checked: none is known to be refused):",
                "• freeze /lab and everything below it",
            ]
        );
        c.question = crate::app::dialog::confirm::Question::Write;
        c.reasons = vec![Reason::NoCgroupKill];
        assert_eq!(
            confirm_lines(&c),
            [
                "• freeze /lab and everything below it",
                "  this kernel has no cgroup.kill: cgtop sends SIGKILL to every process of the subtree",
            ]
        );
    }

    #[test]
    fn wrapped_items_keep_their_indent() {
        assert_eq!(
            wrap_text("• set memory.max of /a/b to 536870912", 20),
            ["• set memory.max of", "  /a/b to 536870912"]
        );
        assert_eq!(
            wrap_text("  a note that wraps here", 12),
            ["  a note", "  that wraps", "  here"]
        );
        assert_eq!(
            wrap_text("plain text wraps flush", 11),
            ["plain text", "wraps flush"]
        );
    }

    #[test]
    fn long_words_are_cut_and_nothing_is_lost() {
        assert_eq!(
            wrap_text("ab /x/yyyyyyyyyy", 6),
            ["ab", "/x/yyy", "yyyyyy", "y"]
        );
        assert_eq!(wrap_text("", 10), [""]);
        assert_eq!(wrap_text("    +cpu", 10), ["    +cpu"]);
        // a width smaller than the indent still makes progress
        assert_eq!(wrap_text("  • abc def", 3), ["  •", "abc", "def"]);
        let s = "über schön";
        assert_eq!(wrap_text(s, 5), ["über", "schön"]);
    }

    #[test]
    fn an_owners_command_breaks_only_between_its_words() {
        let patch = r#"'{"spec":{"containers":[{"name":"api","resources":{"limits":{"memory":"512Mi"}}}]}}'"#;
        let cmd = format!(
            "kubectl patch pod api-7d9f8c6b5-x2x9z -n shop --subresource resize --patch {patch}"
        );
        assert_eq!(
            shell_words("a 'b c' \"d e\" f\\ g"),
            ["a", "'b c'", "\"d e\"", "f\\ g"]
        );
        assert_eq!(shell_words(&cmd).last(), Some(&patch));
        for w in [78, 84, 60, 40] {
            let lines = wrap_command(&cmd, w);
            for l in &lines {
                assert!(super::fit::width(l) <= w, "{l:?} wider than {w}");
            }
            // as the shell reads it: a line ending in " \" goes on with
            // the next; inside the patch's quotes a line break is JSON's
            // white space
            let text = lines.join("\n").replace(" \\\n", " ");
            let flat = text.replace('\n', " ");
            let words = shell_words(&flat);
            assert_eq!(words[..9], shell_words(&cmd)[..9], "{lines:#?}");
            let got: String = words[9..].concat().chars().filter(|c| *c != ' ').collect();
            assert_eq!(got, patch, "{lines:#?}");
            // no word of the command is broken outside the patch, no
            // backslash inside its quotes
            for l in &lines {
                if l.contains("\"spec\"") || l.trim_start().starts_with('"') {
                    assert!(
                        !l.ends_with('\\') || l.ends_with("--patch \\"),
                        "{lines:#?}"
                    );
                }
            }
        }
        // a docker command that fits stays one line, from column 4
        assert_eq!(
            wrap_command("docker update --memory 512m web-1", 78),
            ["    docker update --memory 512m web-1"]
        );
        // wrapped between words, the continuation indented 2 more
        let l = wrap_command("docker update --memory 512m web-1", 24);
        assert_eq!(
            l,
            [
                "    docker update \\",
                "      --memory 512m \\",
                "      web-1"
            ]
        );
    }
}
