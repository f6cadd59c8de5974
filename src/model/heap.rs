//! Giving a large list back to the allocator without making the process
//! keep later freed memory.
//!
//! glibc's malloc serves a block of 128 KiB or more from a mapping of
//! its own, returned to the kernel when the block is freed; but the
//! free of such a block raises that threshold to the block's size (up to
//! 32 MiB), and the heap's trim threshold to twice that, for the rest of
//! the process (mallopt(3), M_MMAP_THRESHOLD: "dynamic mmap
//! threshold"). From then on every block smaller than that comes from
//! the heap, and up to twice that much freed memory stays resident. A
//! one-shot run (`cgtop -b -n 1`) at 10,000 groups freed the priming
//! read's 4 MB merged tree before its printed refresh: every list of the
//! printed refresh then came from the heap, and the freed memory the
//! heap kept was megabytes of the run's peak RSS (BENCHMARKS.md,
//! "a real margin under 30 MB").
//!
//! Shrinking the list to one element first is a `realloc`, which glibc
//! does on a mapped block by shrinking the mapping in place (`mremap`),
//! without the free that moves the threshold; the free of the one page
//! left is below the threshold. With another allocator it is a shrink and
//! a free: the same memory is given back either way.
//!
//! Must not depend on: anything; it is the allocator's business only.

/// Drops `v` and gives its room back, shrunk first so that glibc's mmap
/// threshold does not rise to its size (see the module's text). For a
/// list of 128 KiB or more that is freed before a run's peak.
pub fn give_back<T>(mut v: Vec<T>) {
    v.clear();
    v.shrink_to(1);
}

#[cfg(test)]
mod tests {
    use super::give_back;

    /// The child's part of [`a_list_given_back_leaves_the_next_large_ones_mapped`],
    /// in a process of its own (the threshold is the process's): drops a
    /// 4 MiB list as `CGTOP_HEAP_CHILD` says, then makes two 1 MiB lists
    /// and prints whether each has a mapping of its own (glibc puts a
    /// mapped block's data 16 bytes into its first page; two lists made
    /// one after the other on the heap cannot both be there). Does
    /// nothing in an ordinary run.
    #[test]
    fn child_drops_a_large_list_then_makes_two() {
        let Ok(how) = std::env::var("CGTOP_HEAP_CHILD") else {
            return;
        };
        let big = vec![1u8; 4 << 20];
        match how.as_str() {
            "give_back" => give_back(big),
            _ => drop(big),
        }
        let a = vec![2u8; 1 << 20];
        let b = vec![3u8; 1 << 20];
        let mapped = [&a, &b].iter().all(|v| (v.as_ptr() as usize) % 4096 == 16);
        println!("CHILD {}", if mapped { "mapped" } else { "heap" });
    }

    fn child(how: &str) -> String {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "model::heap::tests::child_drops_a_large_list_then_makes_two",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CGTOP_HEAP_CHILD", how)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (text.lines())
            .find_map(|l| l.split_once("CHILD ").map(|(_, how)| how.trim()))
            .unwrap_or("none")
            .to_owned()
    }

    /// glibc's dynamic mmap threshold: a 4 MiB list dropped whole makes
    /// the next 1 MiB lists come from the heap (the control: the old
    /// code's drop); given back, they are still mapped on their own, and
    /// returned to the kernel when freed.
    #[test]
    fn a_list_given_back_leaves_the_next_large_ones_mapped() {
        let dropped = child("drop");
        if dropped != "heap" {
            println!("skipped: this allocator has no dynamic mmap threshold (a dropped list left the next ones {dropped})");
            return;
        }
        assert_eq!(child("give_back"), "mapped");
    }
}
