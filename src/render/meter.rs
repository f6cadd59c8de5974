//! htop-style meters: `[|||||        42.0%]`, the bar in plain `|`
//! characters (they read without colour too, under NO_COLOR), the figure
//! right-aligned inside the brackets over the bar's empty end.

/// One meter's inside, between `[` and `]`: `fill` (`|` for the used
/// share), `gap` (spaces), and `text` (the figure), which together are
/// exactly as wide as asked. The view styles `fill`, and the first
/// `covered` characters of `text`: the bar reaches under them (a long
/// figure over a full bar, as htop draws it), so the share still shows in
/// colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meter {
    pub fill: String,
    pub gap: String,
    pub text: String,
    pub covered: usize,
}

impl Meter {
    /// A meter `inner` cells wide (brackets not counted) showing `share`
    /// (0.0 to 1.0, clamped; `None`: unknown, an empty bar) and `text`
    /// right-aligned at its end. Where the bar reaches the text, the text
    /// wins: the figure always reads. `text` is ASCII (figures and units).
    pub fn new(share: Option<f64>, text: &str, inner: usize) -> Self {
        let text: String = text.chars().take(inner).collect();
        let room = inner - text.chars().count();
        let bar = share
            .filter(|s| s.is_finite())
            .map_or(0, |s| (s.clamp(0.0, 1.0) * inner as f64).round() as usize);
        let filled = bar.min(room);
        Self {
            fill: "|".repeat(filled),
            gap: " ".repeat(room - filled),
            text,
            covered: bar - filled,
        }
    }

    /// The whole meter with its brackets, unstyled.
    pub fn plain(&self) -> String {
        format!("[{}{}{}]", self.fill, self.gap, self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_its_share_and_the_text_sits_at_the_end() {
        let m = Meter::new(Some(0.5), "50%", 10);
        assert_eq!(m.plain(), "[|||||  50%]");
        assert_eq!(Meter::new(Some(0.0), "0%", 6).plain(), "[    0%]");
        assert_eq!(Meter::new(None, "-", 4).plain(), "[   -]");
    }

    #[test]
    fn the_text_wins_over_a_full_bar_and_the_width_is_kept() {
        let m = Meter::new(Some(1.0), "100%", 8);
        assert_eq!(m.plain(), "[||||100%]");
        // the bar reaches under the whole figure
        assert_eq!(m.covered, 4);
        assert_eq!(Meter::new(Some(0.75), "12/16", 8).covered, 3);
        assert_eq!(Meter::new(Some(0.25), "12/16", 8).covered, 0);
        // beyond the limit, or not a number: clamped, never wider
        assert_eq!(Meter::new(Some(7.0), "x", 3).plain(), "[||x]");
        assert_eq!(Meter::new(Some(f64::NAN), "x", 3).plain(), "[  x]");
        // a text longer than the meter is cut to it
        assert_eq!(Meter::new(Some(0.5), "123456", 4).plain(), "[1234]");
        assert_eq!(Meter::new(Some(0.5), "", 0).plain(), "[]");
    }
}
