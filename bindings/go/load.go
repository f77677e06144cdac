package rig

// #include <rig/disk.h>
import "C"

import (
	"errors"
	"io"
	"os"
)

// loadChunk is the bytes ReadFrom stages at a time.
const loadChunk = 4 << 20

// ReadFrom fills b from r, from its first byte, until b is full or r ends
// (io.ReaderFrom): chunks of r staged in Go memory and copied into b,
// whatever memory b is.  It answers the bytes copied; r ending before b
// is full is no error.
func (b *Buffer) ReadFrom(r io.Reader) (int64, error) {
	total := b.Len()
	chunk := make([]byte, loadChunk)
	var done int64
	for done < total {
		want := chunk
		if rest := total - done; rest < int64(len(want)) {
			want = want[:rest]
		}
		n, err := io.ReadFull(r, want)
		if n > 0 {
			if copyErr := b.CopyFrom(want[:n], done); copyErr != nil {
				return done, copyErr
			}
			done += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return done, nil
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Load makes a buffer of n bytes of d's memory and fills it from r; fewer
// bytes in r is an io.ErrUnexpectedEOF.
func Load(r io.Reader, d Device, n int64) (*Buffer, error) {
	b, err := NewBuffer(d, n, MemoryDevice)
	if err != nil {
		return nil, err
	}
	got, err := b.ReadFrom(r)
	if err == nil && got < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func openFile(path string, mode C.rig_disk_mode_t, offset, length int64) (*Buffer, error) {
	p := cString(path)
	defer free(p)
	var out *C.rig_buffer_t
	if err := call(func() C.rig_status_t {
		return C.rig_disk_open(p, mode, C.int64_t(offset), C.int64_t(length), &out)
	}); err != nil {
		return nil, err
	}
	return adopt(out), nil
}

// OpenFile is a read-only buffer on the io device DISK over length bytes
// of the file at path from offset (length -1: to its end): rig_disk_open.
func OpenFile(path string, offset, length int64) (*Buffer, error) {
	return openFile(path, C.RIG_DISK_READ, offset, length)
}

// OpenFileForWriting is OpenFile for reading and writing: copies into the
// buffer write the file (RIG_DISK_READ_WRITE).
func OpenFileForWriting(path string, offset, length int64) (*Buffer, error) {
	return openFile(path, C.RIG_DISK_READ_WRITE, offset, length)
}

// SyncFile makes the bytes copies wrote into file, a buffer
// OpenFileForWriting made, durable: once the work that writes it is done,
// the file is flushed to its storage (rig_disk_sync).  A copy into a file
// is done once its bytes are written, not yet durable.
func SyncFile(file *Buffer) error {
	return file.with(func(p *C.rig_buffer_t) C.rig_status_t { return C.rig_disk_sync(p) })
}

// SaveFile writes all of b into a new file at path (replacing one there)
// and makes it durable: a checkpoint of any device's memory.
func SaveFile(b *Buffer, path string) error {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(path, b.Len()); err != nil {
		return err
	}
	file, err := OpenFileForWriting(path, 0, -1)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := Copy(b, file); err != nil {
		return err
	}
	return SyncFile(file)
}

// LoadFile reads the whole file at path into a new buffer of d's memory
// with one copy from DISK (io_uring, O_DIRECT where the file allows).
func LoadFile(path string, d Device) (*Buffer, error) {
	file, err := OpenFile(path, 0, -1)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := NewBuffer(d, file.Len(), MemoryDevice)
	if err != nil {
		return nil, err
	}
	if err := Copy(file, b); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}
