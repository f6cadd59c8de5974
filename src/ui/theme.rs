//! Colours, and none at all when NO_COLOR is set (no-color.org).
//!
//! The palette uses only the 16 ANSI colours (ratatui's named colours),
//! so a 16-colour console, a 256-colour terminal and a truecolor one draw
//! the same thing, each with its own palette. Every pair is chosen to read
//! on a dark AND a light background:
//!
//! - no text is drawn in a colour alone that vanishes on one of them:
//!   yellow, cyan and bright white on white, blue and dark grey (bright
//!   black, which Solarized makes the background itself) on black. Text
//!   that must stand out gets a background of its own: black on white
//!   (ANSI 0 on 7, the pair every palette keeps apart) for the column
//!   header and the footer's keys, black on yellow for warm figures and
//!   warnings, bright white on red for hot figures and errors, black on
//!   cyan for a frozen group. Faint text is the DIM attribute, which the
//!   terminal derives from its own foreground.
//! - the cursor bar is reverse video (with bold): the terminal's own
//!   foreground and background swapped, the one pair that reads in every
//!   palette. On the cursor row every cell's own style is replaced by it
//!   (`ui::tree`), so the row is one readable style, never yellow or grey
//!   text on a coloured bar.
//! - the only colours used as foreground on the default background are
//!   red, green and magenta (bar fills, matches), which keep their
//!   contrast on both.
//!
//! NO_COLOR ([`Theme::mono`]) keeps attributes only (bold, reverse,
//! underline, dim), never a colour. The settings file's `[colours]` turns
//! colour off (`enabled = false`: the same as NO_COLOR) or repaints the
//! slots it names ([`Theme::from_settings`]); its choices are the
//! user's, and the rules above are the defaults'. The cursor bar stays
//! reverse video: no slot of the file changes it.

use crate::model::files::config::{Ansi, Colours, Paint};
use crate::render::severity::Severity;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub header: Style,
    pub title: Style,
    pub column_header: Style,
    pub selected: Style,
    pub dim: Style,
    pub matched: Style,
    pub warn: Style,
    pub error: Style,
    pub bar: Style,
    pub key: Style,
    pub frozen: Style,
    /// A figure at 75 % of its limit or more, or under some pressure
    /// (`render::severity`).
    pub warm: Style,
    /// A figure at 90 % of its limit or more, or under heavy pressure.
    pub hot: Style,
}

impl Theme {
    pub fn color() -> Self {
        let warm = Style::new().fg(Color::Black).bg(Color::Yellow);
        let hot = Style::new()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD);
        let black_on_white = Style::new().fg(Color::Black).bg(Color::Gray);
        Self {
            header: Style::new().add_modifier(Modifier::BOLD),
            title: Style::new().add_modifier(Modifier::BOLD),
            column_header: black_on_white.add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            dim: Style::new().add_modifier(Modifier::DIM),
            matched: Style::new()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            warn: warm,
            error: hot,
            bar: Style::new().fg(Color::Green),
            key: black_on_white,
            frozen: Style::new().fg(Color::Black).bg(Color::Cyan),
            warm,
            hot,
        }
    }

    /// Only attributes, no colours.
    pub fn mono() -> Self {
        let plain = Style::new();
        Self {
            header: plain,
            title: Style::new().add_modifier(Modifier::BOLD),
            column_header: Style::new().add_modifier(Modifier::REVERSED),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            dim: plain,
            matched: Style::new().add_modifier(Modifier::BOLD),
            warn: Style::new().add_modifier(Modifier::BOLD),
            error: Style::new().add_modifier(Modifier::BOLD),
            bar: plain,
            key: Style::new().add_modifier(Modifier::REVERSED),
            frozen: Style::new().add_modifier(Modifier::BOLD),
            warm: Style::new().add_modifier(Modifier::UNDERLINED),
            hot: Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        }
    }

    /// NO_COLOR present and not empty disables colour.
    pub fn from_no_color(no_color: Option<&str>) -> Self {
        match no_color {
            Some(v) if !v.is_empty() => Self::mono(),
            _ => Self::color(),
        }
    }

    /// NO_COLOR, then the settings file's `[colours]`: NO_COLOR present
    /// and not empty, or `enabled = false`, is [`Theme::mono`]; else the
    /// colours with the file's slots repainted (each keeps its
    /// attributes: hot stays bold).
    pub fn from_settings(no_color: Option<&str>, c: &Colours) -> Self {
        let base = Self::from_no_color(no_color);
        if base == Self::mono() || !c.enabled {
            return Self::mono();
        }
        let mut t = base;
        let set = |style: &mut Style, p: Option<Paint>| {
            if let Some(p) = p {
                style.fg = Some(ansi(p.fg));
                style.bg = p.bg.map(ansi);
            }
        };
        set(&mut t.warm, c.warm);
        set(&mut t.warn, c.warm);
        set(&mut t.hot, c.hot);
        set(&mut t.error, c.hot);
        set(&mut t.bar, c.bar);
        set(&mut t.frozen, c.frozen);
        set(&mut t.matched, c.matched);
        set(&mut t.key, c.key);
        set(&mut t.column_header, c.column_header);
        t
    }

    /// The style of a figure at this level: plain where the level is
    /// unknown (no limit) or normal.
    pub fn severity(&self, level: Option<Severity>) -> Style {
        match level {
            Some(Severity::Hot) => self.hot,
            Some(Severity::Warm) => self.warm,
            Some(Severity::Normal) | None => Style::new(),
        }
    }

    /// A meter's fill at this level: the bar colour while normal.
    pub fn fill(&self, level: Option<Severity>) -> Style {
        match level {
            Some(Severity::Hot | Severity::Warm) => self.severity(level),
            Some(Severity::Normal) | None => self.bar,
        }
    }
}

/// The terminal's colour of an ANSI name.
fn ansi(a: Ansi) -> Color {
    match a {
        Ansi::Black => Color::Black,
        Ansi::Red => Color::Red,
        Ansi::Green => Color::Green,
        Ansi::Yellow => Color::Yellow,
        Ansi::Blue => Color::Blue,
        Ansi::Magenta => Color::Magenta,
        Ansi::Cyan => Color::Cyan,
        Ansi::Gray => Color::Gray,
        Ansi::DarkGray => Color::DarkGray,
        Ansi::LightRed => Color::LightRed,
        Ansi::LightGreen => Color::LightGreen,
        Ansi::LightYellow => Color::LightYellow,
        Ansi::LightBlue => Color::LightBlue,
        Ansi::LightMagenta => Color::LightMagenta,
        Ansi::LightCyan => Color::LightCyan,
        Ansi::White => Color::White,
    }
}

/// The built-in palette in the settings file's words, slot by slot, as
/// assets/config.toml writes it (a test checks the two agree).
pub fn default_paints() -> [(&'static str, Paint); 7] {
    let t = Theme::color();
    let paint = |s: Style| Paint {
        fg: s.fg.and_then(ansi_of).unwrap_or(Ansi::Black),
        bg: s.bg.and_then(ansi_of),
    };
    [
        ("warm", paint(t.warm)),
        ("hot", paint(t.hot)),
        ("bar", paint(t.bar)),
        ("frozen", paint(t.frozen)),
        ("matched", paint(t.matched)),
        ("key", paint(t.key)),
        ("column_header", paint(t.column_header)),
    ]
}

fn ansi_of(c: Color) -> Option<Ansi> {
    Ansi::ALL.into_iter().find(|a| ansi(*a) == c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_beats_the_file() {
        let mut c = Colours::default();
        assert_eq!(Theme::from_settings(Some("1"), &c), Theme::mono());
        assert_eq!(Theme::from_settings(None, &c), Theme::color());
        c.enabled = false;
        assert_eq!(Theme::from_settings(None, &c), Theme::mono());
        c.enabled = true;
        c.warm = Some(Paint {
            fg: Ansi::White,
            bg: Some(Ansi::Blue),
        });
        c.bar = Some(Paint {
            fg: Ansi::Cyan,
            bg: None,
        });
        let t = Theme::from_settings(None, &c);
        assert_eq!(t.warm, Style::new().fg(Color::White).bg(Color::Blue));
        assert_eq!(t.warn, t.warm);
        assert_eq!(t.bar, Style::new().fg(Color::Cyan));
        assert_eq!(t.hot, Theme::color().hot);
        assert_eq!(Theme::from_settings(Some("1"), &c), Theme::mono());
        // an empty NO_COLOR is no NO_COLOR (no-color.org)
        assert_eq!(Theme::from_settings(Some(""), &c), t);
    }
}
