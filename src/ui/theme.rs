//! Colours, and none at all when NO_COLOR is set (no-color.org).

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
}

impl Theme {
    pub fn color() -> Self {
        Self {
            header: Style::new().fg(Color::Cyan),
            title: Style::new().add_modifier(Modifier::BOLD),
            column_header: Style::new().fg(Color::Black).bg(Color::Green),
            selected: Style::new().fg(Color::Black).bg(Color::Cyan),
            dim: Style::new().fg(Color::DarkGray),
            matched: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            warn: Style::new().fg(Color::Yellow),
            error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            bar: Style::new().fg(Color::Green),
            key: Style::new().fg(Color::Black).bg(Color::Cyan),
            frozen: Style::new().fg(Color::LightBlue),
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
        }
    }

    /// NO_COLOR present and not empty disables colour.
    pub fn from_no_color(no_color: Option<&str>) -> Self {
        match no_color {
            Some(v) if !v.is_empty() => Self::mono(),
            _ => Self::color(),
        }
    }
}
