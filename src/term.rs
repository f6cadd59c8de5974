//! The terminal: one idempotent restore reached from every exit path
//! (Drop, the chained panic hook, quit, signals), the input thread, the
//! signal thread, and the check that the tty is still there.

use crate::app::Msg;
use crossterm::event::{self, Event, KeyEventKind};
use crossterm::{cursor, execute, terminal};
use std::io::Write;
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
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
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
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        MOUSE.store(mouse, Ordering::SeqCst);
        let mut out = std::io::stdout();
        execute!(out, terminal::EnterAlternateScreen, cursor::Hide)?;
        if mouse {
            execute!(out, event::EnableMouseCapture)?;
        }
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
                        Ok(Event::Resize(width, height)) => Msg::Resized {
                            width,
                            height,
                            tree_rows: crate::ui::tree_rows_for(width, height),
                        },
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
        MouseEventKind::Down(MouseButton::Left) => {
            let (w, h) = terminal::size().ok()?;
            MouseAction::ClickRow(crate::ui::tree_row_at(w, h, m.column, m.row)?)
        }
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
/// teardown runs.
pub fn spawn_signals(tx: Sender<Msg>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGQUIT, SIGINT])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                // restore first: if the main loop is stuck, the terminal is
                // still given back
                if tx.send(Msg::Signalled(sig)).is_err() {
                    restore();
                    std::process::exit(128 + sig);
                }
            }
        })?;
    Ok(())
}
