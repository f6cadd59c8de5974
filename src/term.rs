//! The terminal: one idempotent restore reached from every exit path
//! (Drop, the chained panic hook, quit, signals, and a stop: Ctrl-Z or
//! SIGTSTP), its counterpart on SIGCONT, the input thread, the signal
//! thread, the window size, and the check that the tty is still there.
//!
//! Nothing here may panic or print once the tty is gone (a hang-up): every
//! write to it is allowed to fail. The window size is asked of the tty
//! alone ([`size`], TIOCGWINSZ): crossterm's own `terminal::size()` runs
//! `tput` from `$PATH` when the ioctl fails, which as root would run
//! whatever a user put first in it.

use crate::app::Msg;
use crossterm::event::{self, Event, KeyEventKind};
use crossterm::{cursor, execute, terminal};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::io::{Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Set while the terminal is in raw mode / alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Leaves raw mode and the alternate screen and shows the cursor. Safe to
/// call any number of times from any thread; only the first call after
/// `enter` does anything.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout();
    if MOUSE.load(Ordering::SeqCst) {
        let _ = execute!(out, event::DisableMouseCapture);
    }
    let _ = execute!(
        out,
        event::DisableBracketedPaste,
        terminal::LeaveAlternateScreen,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

/// Gives the terminal back after a stop (SIGCONT): raw mode again (the
/// shell put the tty in cooked mode for its prompt, so keys would wait for
/// Enter), the alternate screen, the hidden cursor and the mouse. Also
/// right after an outside SIGSTOP, when raw mode was never left: raw mode
/// is set anew either way. The caller then redraws in full.
pub fn resume() -> std::io::Result<()> {
    // a no-op unless raw mode is on; then on again from the tty's state now
    let _ = terminal::disable_raw_mode();
    set_up()
}

/// Raw mode, the alternate screen, the hidden cursor, bracketed paste,
/// and the mouse if [`MOUSE`] says so: what [`TerminalGuard::enter`] sets
/// and [`resume`] sets again, undone by [`restore`].
fn set_up() -> std::io::Result<()> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = std::io::stdout();
    execute!(
        out,
        terminal::EnterAlternateScreen,
        cursor::Hide,
        // a paste arrives as one piece of text, not as keys
        event::EnableBracketedPaste
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(out, event::EnableMouseCapture)?;
    }
    Ok(())
}

/// Stops cgtop as Ctrl-Z stops a program in a shell, with the terminal
/// restored meanwhile; returns once continued (`fg`), with the terminal
/// set up again (the caller redraws in full). Returns `Ok(false)` without
/// stopping when nobody could continue it (see [`job_control`]).
pub fn suspend() -> std::io::Result<bool> {
    if !job_control() {
        return Ok(false);
    }
    restore();
    // SIGSTOP, not SIGTSTP: cgtop catches SIGTSTP to get here. It stops
    // every thread at once; the shell sees the job stopped and takes the
    // terminal back.
    let _ = signal_hook::low_level::raise(signal_hook::consts::SIGSTOP);
    resume()?;
    Ok(true)
}

/// Whether a stopped cgtop could be continued: a job-control shell is its
/// parent, in the same session but another process group. Otherwise (run
/// as `ssh -t host cgtop`, `script -c cgtop`: cgtop leads its own session,
/// its group is orphaned) the kernel itself ignores Ctrl-Z (POSIX discards
/// terminal stops for orphaned groups), and so does cgtop: a stop there
/// would be for ever.
pub fn job_control() -> bool {
    use rustix::process::{getpgid, getpgrp, getppid, getsid};
    let Some(parent) = getppid() else {
        return false;
    };
    match (getsid(None), getsid(Some(parent)), getpgid(Some(parent))) {
        (Ok(own), Ok(theirs), Ok(their_group)) => own == theirs && their_group != getpgrp(),
        _ => false,
    }
}

/// The terminal's size in columns and rows, from the tty itself
/// (TIOCGWINSZ on stdout, where cgtop draws). An error means the tty is
/// gone (hung up); there is no other source to fall back on.
pub fn size() -> std::io::Result<(u16, u16)> {
    let ws = rustix::termios::tcgetwinsize(std::io::stdout())?;
    Ok((ws.ws_col, ws.ws_row))
}

/// Pins `PATH` to the system's own directories. cgtop runs no program; the
/// one a library can run is crossterm's `tput` fallback for the window
/// size, reached from crossterm's input reader on SIGWINCH (a resize just
/// before a hang-up) where cgtop cannot replace the size query. Whatever
/// a user put first in `$PATH` (kept by `su`, `sudo -E`) must not run as
/// root that way. Called first thing in `main`, before any thread exists.
pub fn pin_path() {
    std::env::set_var(
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    );
}

/// The crossterm backend with the window size from [`size`], never from
/// crossterm (whose fallback runs `tput`), and a cursor that can always be
/// shown: ratatui's `Terminal` shows it on drop and prints (and so, with
/// the tty gone, panics) when that fails.
pub struct TtyBackend(CrosstermBackend<Stdout>);

impl TtyBackend {
    pub fn new() -> Self {
        Self(CrosstermBackend::new(std::io::stdout()))
    }
}

impl Default for TtyBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for TtyBackend {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.0.draw(content)
    }
    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> std::io::Result<()> {
        // restore() shows it too; a tty that is gone cannot show anything
        let _ = self.0.show_cursor();
        Ok(())
    }
    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        self.0.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.0.set_cursor_position(position)
    }
    fn clear(&mut self) -> std::io::Result<()> {
        self.0.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.0.clear_region(clear_type)
    }
    fn size(&self) -> std::io::Result<Size> {
        let (width, height) = size()?;
        Ok(Size { width, height })
    }
    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        let ws = rustix::termios::tcgetwinsize(std::io::stdout())?;
        Ok(WindowSize {
            columns_rows: Size {
                width: ws.ws_col,
                height: ws.ws_row,
            },
            pixels: Size {
                width: ws.ws_xpixel,
                height: ws.ws_ypixel,
            },
        })
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.0)
    }
}

/// Restores the terminal when dropped.
pub struct TerminalGuard;

impl TerminalGuard {
    /// Enters raw mode and the alternate screen, and installs a panic
    /// hook that restores the terminal before the previous hook prints.
    pub fn enter(mouse: bool) -> std::io::Result<Self> {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
        // read by restore only once set_up made the terminal ACTIVE
        MOUSE.store(mouse, Ordering::SeqCst);
        set_up()?;
        Ok(Self)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Reads terminal events and forwards them. On EOF or an error (the tty
/// is gone) it sends `InputClosed` once and ends, instead of spinning.
pub fn spawn_input(tx: Sender<Msg>) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || loop {
            match event::poll(Duration::from_millis(500)) {
                Ok(false) => {
                    if !tty_alive() {
                        let _ = tx.send(Msg::InputClosed);
                        return;
                    }
                }
                Ok(true) => {
                    let msg = match event::read() {
                        Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                        // the size crossterm sends is ignored: ask the tty
                        Ok(Event::Resize(..)) => match size() {
                            Ok((width, height)) => Msg::Resized {
                                width,
                                height,
                                tree_rows: crate::ui::tree_rows_for(width, height),
                            },
                            Err(_) => Msg::InputClosed,
                        },
                        Ok(Event::Paste(text)) => {
                            Msg::Paste(text.chars().take(crate::app::PASTE_CAP).collect())
                        }
                        Ok(Event::Mouse(m)) => match mouse(m) {
                            Some(msg) => msg,
                            None => continue,
                        },
                        Ok(_) => continue,
                        Err(_) => Msg::InputClosed,
                    };
                    let closed = matches!(msg, Msg::InputClosed);
                    if tx.send(msg).is_err() || closed {
                        return;
                    }
                }
                Err(_) => {
                    let _ = tx.send(Msg::InputClosed);
                    return;
                }
            }
        })
}

/// Turns a mouse event (only with `--mouse`) into a message: the wheel
/// moves the cursor, a left click on a tree row selects it.
fn mouse(m: event::MouseEvent) -> Option<Msg> {
    use crate::app::MouseAction;
    use event::{MouseButton, MouseEventKind};
    let action = match m.kind {
        MouseEventKind::ScrollUp => MouseAction::ScrollUp,
        MouseEventKind::ScrollDown => MouseAction::ScrollDown,
        // which row that is depends on the screen's layout: the event
        // loop asks the view (`ui::tree_row_at`)
        MouseEventKind::Down(MouseButton::Left) => MouseAction::ClickAt {
            x: m.column,
            y: m.row,
        },
        _ => return None,
    };
    Some(Msg::Mouse(action))
}

/// False once the controlling terminal has been hung up: tcgetattr on a
/// hung-up tty fails with EIO (the SSH connection dropped).
pub fn tty_alive() -> bool {
    rustix::termios::tcgetattr(std::io::stdin()).is_ok()
        || rustix::termios::tcgetattr(std::io::stdout()).is_ok()
}

/// SIGTERM, SIGHUP, SIGQUIT and SIGINT become a message, so the normal
/// teardown runs (and cgtop exits 128 + the signal's number); SIGTSTP
/// (`kill -TSTP`; Ctrl-Z itself arrives as a key in raw mode) and SIGCONT
/// become messages too, so that the main loop, which owns the terminal,
/// stops and continues it between two frames.
pub fn spawn_signals(tx: Sender<Msg>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGTSTP, SIGCONT])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let msg = match sig {
                    SIGTSTP => Msg::SuspendRequested,
                    SIGCONT => Msg::Continued,
                    _ => Msg::Signalled(sig),
                };
                let fatal = matches!(msg, Msg::Signalled(_));
                // the main loop is gone: restore here, so that the terminal
                // is given back even then
                if tx.send(msg).is_err() && fatal {
                    restore();
                    std::process::exit(128 + sig);
                }
            }
        })?;
    Ok(())
}
