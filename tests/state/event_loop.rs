//! The real main loop, `run::event_loop`, on a `TestBackend`: messages
//! go in through its channel as the input and collector threads would
//! send them, and the commands it passes on to the collector come out of
//! the other channel.
//!
//! To make the frames deterministic, the backend tells the feeding thread
//! each time a frame is flushed, and the thread sends the next message
//! only then: every message is one turn of the loop and one frame, so
//! the last frame is the one after the last key before `q`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, Msg};
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collected, Command};
use cgtop::ui::Theme;
use common::*;
use crossterm::event::KeyCode;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::Modifier;
use ratatui::Terminal;
use std::sync::mpsc;
use std::time::Duration;

/// A `TestBackend` that reports every flushed frame.
struct Signalling {
    inner: TestBackend,
    flushed: mpsc::Sender<()>,
}

impl Backend for Signalling {
    type Error = <TestBackend as Backend>::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        // the feeding thread may be gone once it sent `q`
        let _ = self.flushed.send(());
        Ok(())
    }
}

#[test]
fn keys_through_the_real_loop_move_the_selection_and_q_ends_it() {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
    let (flushed_tx, flushed_rx) = mpsc::channel::<()>();
    let mut terminal = Terminal::new(Signalling {
        inner: TestBackend::new(80, 24),
        flushed: flushed_tx,
    })
    .expect("terminal");
    let mut app = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut app, 80, 24);
    let mut c = collector(&fixture("pure-v2-systemd"));
    let first = refresh(&mut c, 0.0);

    let feeder = std::thread::spawn(move || {
        let frame = || {
            flushed_rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the loop drew a frame");
        };
        frame(); // "reading the cgroup tree…"
        let msgs = [
            Msg::Collected(Collected::Refresh(Box::new(first))),
            ch('j'),
            ch('j'),
            ch('j'),
            key(KeyCode::End),
            ch('k'),
        ];
        for m in msgs {
            tx.send(m).expect("the loop is listening");
            frame();
        }
        tx.send(ch('q')).expect("the loop is listening");
        // no frame after q: the loop returns
        assert!(flushed_rx.recv_timeout(Duration::from_millis(300)).is_err());
    });

    let (writer, _writes) = mpsc::channel();
    let outlets = cgtop::run::Outlets {
        collector: cmd_tx,
        writer,
    };
    let res = cgtop::run::event_loop(&mut terminal, &mut app, &Theme::mono(), &rx, &outlets);
    feeder.join().expect("the feeding thread");
    assert!(res.is_ok(), "{res:?}");
    assert!(app.quitting);

    let want = "/user.slice/user-0.slice/user@0.service/app.slice/dbus.socket";
    assert_eq!(selected(&app), want);
    // the last frame: the cursor bar is on dbus.socket, and the detail
    // is about it
    let buf = terminal.backend().inner.buffer();
    let rows: Vec<(String, bool)> = buf
        .content
        .chunks(usize::from(buf.area.width))
        .map(|r| {
            (
                r.iter().map(Cell::symbol).collect(),
                r.iter().all(|c| c.modifier.contains(Modifier::REVERSED)),
            )
        })
        .collect();
    let bars: Vec<&str> = rows
        .iter()
        .filter(|(t, rev)| *rev && !t.starts_with("GROUP"))
        .map(|(t, _)| t.trim_end())
        .collect();
    assert_eq!(bars.len(), 1, "one cursor bar: {bars:#?}");
    assert!(bars[0].contains("└──dbus.socket"), "{}", bars[0]);
    // (on 80x24 the detail is the strip: its rule names the group, the
    // path shortened from the left)
    assert!(
        rows.iter()
            .any(|(t, _)| t.contains("Enter: detail") && t.contains("/app.slice/dbus.socket ")),
        "the detail strip names the selection"
    );

    // what the loop passed on to the collector: the detail of each group
    // the cursor stopped on, in order
    let inspected: Vec<String> = cmd_rx
        .try_iter()
        .map(|c| match c {
            Command::Inspect(Some(p)) => p.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        inspected,
        [
            "/",
            "/dev-hugepages.mount",
            "/dev-mqueue.mount",
            "/init.scope",
            "/user.slice/user-0.slice/user@0.service/init.scope",
            want,
        ]
    );
}

#[test]
fn the_loop_ends_when_every_sender_is_gone() {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (cmd_tx, _cmd_rx) = mpsc::channel::<Command>();
    let mut terminal = Terminal::new(TestBackend::new(40, 10)).expect("terminal");
    let mut app = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    tx.send(ch('j')).expect("send");
    drop(tx);
    let (writer, _writes) = mpsc::channel();
    let outlets = cgtop::run::Outlets {
        collector: cmd_tx,
        writer,
    };
    let res = cgtop::run::event_loop(&mut terminal, &mut app, &Theme::mono(), &rx, &outlets);
    assert!(res.is_ok());
    assert!(
        !app.quitting,
        "it ended because its input did, not by a key"
    );
}

/// Records what the loop asked of the terminal.
struct FakeTty {
    calls: Vec<&'static str>,
    can_stop: bool,
}

impl cgtop::run::Tty for FakeTty {
    fn suspend(&mut self) -> std::io::Result<bool> {
        self.calls.push("suspend");
        Ok(self.can_stop)
    }
    fn resume(&mut self) -> std::io::Result<()> {
        self.calls.push("resume");
        Ok(())
    }
}

/// Ctrl-Z and SIGTSTP reach the terminal's suspend, SIGCONT its resume,
/// and the loop goes on (a full redraw, no quit); where cgtop cannot be
/// stopped, the status line says why.
#[test]
fn suspend_and_continue_go_to_the_terminal_and_the_loop_goes_on() {
    for can_stop in [true, false] {
        let (tx, rx) = mpsc::channel::<Msg>();
        let (cmd_tx, _cmd_rx) = mpsc::channel::<Command>();
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let mut app = App::new(
            host(),
            pure_v2_mount(),
            GroupPath::root(),
            Duration::from_secs(1),
        );
        for m in [ctrl('z'), Msg::SuspendRequested, Msg::Continued] {
            tx.send(m).expect("send");
        }
        drop(tx);
        let (writer, _writes) = mpsc::channel();
        let outlets = cgtop::run::Outlets {
            collector: cmd_tx,
            writer,
        };
        let mut tty = FakeTty {
            calls: Vec::new(),
            can_stop,
        };
        let res = cgtop::run::event_loop_on(
            &mut terminal,
            &mut app,
            &Theme::mono(),
            &rx,
            &outlets,
            &mut tty,
        );
        assert!(res.is_ok(), "{res:?}");
        assert_eq!(tty.calls, ["suspend", "suspend", "resume"]);
        assert!(!app.quitting);
        let status = app.status.as_ref().map(|s| s.text.clone());
        if can_stop {
            assert_eq!(status, None);
        } else {
            assert!(
                status.is_some_and(|s| s.contains("cannot suspend")),
                "the status says why"
            );
        }
    }
}
