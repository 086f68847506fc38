// Package qdrant keeps a KG's entity vectors in a Qdrant server
// (https://qdrant.tech) and searches them there, as a vecindex.Index.
//
// Why: stem's default entity index (kgvec) encodes every entity once per
// KG and encoder and caches the vectors in a local file that each process
// loads whole into memory. For KGs of millions of entities that means
// gigabytes per process and a long first encoding on every new machine. A
// Qdrant collection is a shared, persistent index instead: encoded once,
// uploaded once, then searched by any number of stem processes and machines
// without loading the vectors locally.
//
// What is stored: one collection per KG and encoder (see CollectionName),
// with cosine distance and the encoder's dimension. Point i is entity i:
// its id is the entity id as an unsigned integer, its vector the entity's
// embedding, and its payload {"name": <entity name>} so the collection can
// be inspected in Qdrant's dashboard. Ensure creates and fills a collection
// when it is missing, and re-creates it when it has the wrong dimension or
// distance or a point count other than the number of entities (an upload
// interrupted half way).
//
// Search is exact by default (Qdrant scans every vector), so results match
// vecindex.Flat's: the same ids in the same order, scores within float32
// rounding. Config.Approximate (?approximate=1) lets Qdrant use its HNSW
// graph instead, faster on very large collections but with lower recall.
//
// Starting Qdrant with its official container (gRPC on 6334, REST and the
// dashboard on 6333, data kept in ./qdrant_storage):
//
//	docker run -p 6333:6333 -p 6334:6334 \
//	    -v "$(pwd)/qdrant_storage:/qdrant/storage" qdrant/qdrant:v1.17.1
//
// then point stem at it with --vector-store qdrant://127.0.0.1:6334. For a
// server with an API key, export the key (QDRANT__SERVICE__API_KEY on the
// server side) and add ?api-key-env=VAR&tls=1 to the URL.
//
// Transient failures (gRPC Unavailable, ResourceExhausted, DeadlineExceeded)
// are retried a bounded number of times with exponential backoff; every
// call attempt has its own timeout and honours the caller's context.
package qdrant

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/stem-kgqa/stem/vecindex"
)

// Store is a connection to one Qdrant server. It is safe for concurrent use.
type Store struct {
	cfg         Config
	apiKey      string
	conn        *grpc.ClientConn
	health      pb.QdrantClient
	collections pb.CollectionsClient
	points      pb.PointsClient
	// sleep waits d or until ctx is done; tests replace it to observe the
	// backoff sequence without waiting.
	sleep func(ctx context.Context, d time.Duration) error
}

// Open connects to the Qdrant server cfg describes and checks that it
// answers (a health check, retried like any call), so a wrong address fails
// here rather than at the first search.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Host == "" {
		return nil, errors.New("qdrant: no host given")
	}
	if cfg.Collection != "" {
		if err := checkCollectionName(cfg.Collection); err != nil {
			return nil, fmt.Errorf("qdrant %s: %w", cfg.Addr(), err)
		}
	}
	cfg = cfg.withDefaults()
	key := cfg.APIKey
	if key == "" && cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("qdrant %s: api-key-env=%s but that environment variable is empty or unset", cfg.Addr(), cfg.APIKeyEnv)
		}
	}
	creds := insecure.NewCredentials()
	if cfg.TLS {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(cfg.Addr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("qdrant %s: %w", cfg.Addr(), err)
	}
	s := &Store{
		cfg:         cfg,
		apiKey:      key,
		conn:        conn,
		health:      pb.NewQdrantClient(conn),
		collections: pb.NewCollectionsClient(conn),
		points:      pb.NewPointsClient(conn),
		sleep:       sleepCtx,
	}
	err = s.call(ctx, "", "health check", func(ctx context.Context) error {
		_, err := s.health.HealthCheck(ctx, &pb.HealthCheckRequest{})
		return err
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the connection; Collections of s stop working.
func (s *Store) Close() error { return s.conn.Close() }

// Config returns the configuration s uses, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// CollectionFor is the collection for the KG kgID under encoder encoderID:
// the URL's collection= when one was given, else CollectionName's.
func (s *Store) CollectionFor(kgID, encoderID string) string {
	if s.cfg.Collection != "" {
		return s.cfg.Collection
	}
	return CollectionName(kgID, encoderID)
}

// sleepCtx waits d, returning early with ctx's error when ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryable reports whether err is worth another attempt: the server was
// unreachable or restarting, overloaded, or too slow this time. Errors in
// the request itself (InvalidArgument, NotFound, ...) would fail again.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded:
		return true
	}
	return false
}

// call runs f with a per-attempt timeout and the API key attached,
// retrying transient failures with exponential backoff, and wraps the final
// error with the server, the collection (when there is one) and what was
// being done.
func (s *Store) call(ctx context.Context, collection, what string, f func(context.Context) error) error {
	wait := s.cfg.Backoff
	for attempt := 0; ; attempt++ {
		err := ctx.Err()
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
			if s.apiKey != "" {
				actx = metadata.AppendToOutgoingContext(actx, "api-key", s.apiKey)
			}
			err = f(actx)
			cancel()
			if err == nil {
				return nil
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up: report its reason (for errors.Is) rather
			// than the gRPC status it caused.
			return s.wrap(collection, what, attempt+1, cerr)
		}
		if !retryable(err) || attempt >= s.cfg.MaxRetries {
			return s.wrap(collection, what, attempt+1, err)
		}
		if err := s.sleep(ctx, wait); err != nil {
			return s.wrap(collection, what, attempt+1, err)
		}
		wait = min(2*wait, MaxBackoff)
	}
}

// wrap names the server, the collection and the operation in err.
func (s *Store) wrap(collection, what string, attempts int, err error) error {
	where := "qdrant " + s.cfg.Addr()
	if collection != "" {
		where += " collection " + collection
	}
	if attempts > 1 {
		return fmt.Errorf("%s: %s (after %d attempts): %w", where, what, attempts, err)
	}
	return fmt.Errorf("%s: %s: %w", where, what, err)
}

// Delete removes collection and its points; deleting a missing collection
// is not an error.
func (s *Store) Delete(ctx context.Context, collection string) error {
	return s.call(ctx, collection, "delete collection", func(ctx context.Context) error {
		_, err := s.collections.Delete(ctx, &pb.DeleteCollection{CollectionName: collection})
		return err
	})
}

// Collection is a Qdrant collection holding a vector set that Ensure has
// checked to be complete; it is a vecindex.Index whose ids are point ids.
type Collection struct {
	s    *Store
	name string
	dim  int
	n    int
}

// Compile-time check that Collection satisfies vecindex.Index.
var _ vecindex.Index = (*Collection)(nil)

// Ensure returns collection holding n vectors of dimension dim, uploading
// them unless the collection already holds exactly that: created when
// missing (cosine distance), re-created when its dimension or distance
// differs or its point count is not n (a half-finished upload).
//
// vectors(lo, hi) returns rows lo..hi-1 row-major ((hi-lo)*dim values) and
// is called once per batch, so a caller can encode lazily instead of holding
// every vector in memory. names(i) is row i's payload name (nil: no
// payload). progress(done, n) is called after each batch (nil: not at all).
// Point i gets id i, matching the entity ids kgvec uses.
func (s *Store) Ensure(ctx context.Context, collection string, dim, n int,
	vectors func(lo, hi int) ([]float32, error), names func(i int) string,
	progress func(done, total int)) (*Collection, error) {
	if err := checkCollectionName(collection); err != nil {
		return nil, fmt.Errorf("qdrant %s: %w", s.cfg.Addr(), err)
	}
	if dim < 1 || dim > vecindex.MaxDim {
		return nil, fmt.Errorf("qdrant %s collection %s: dimension %d out of range 1..%d", s.cfg.Addr(), collection, dim, vecindex.MaxDim)
	}
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("qdrant %s collection %s: %d vectors, want 0..%d (int32 ids)", s.cfg.Addr(), collection, n, math.MaxInt32)
	}
	if n > 0 && vectors == nil {
		return nil, fmt.Errorf("qdrant %s collection %s: no vector source for %d vectors", s.cfg.Addr(), collection, n)
	}
	c := &Collection{s: s, name: collection, dim: dim, n: n}
	ok, err := c.complete(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		return c, nil
	}
	if err := c.create(ctx); err != nil {
		return nil, err
	}
	if err := c.upload(ctx, vectors, names, progress); err != nil {
		return nil, err
	}
	count, err := c.count(ctx)
	if err != nil {
		return nil, err
	}
	if count != uint64(n) {
		return nil, fmt.Errorf("qdrant %s collection %s: holds %d points after uploading %d", s.cfg.Addr(), collection, count, n)
	}
	return c, nil
}

// complete reports whether the collection exists with c's dimension, cosine
// distance and exactly c.n points. Any other existing collection is deleted
// so that create starts afresh: upserting over it would leave stray points
// of a larger old upload.
func (c *Collection) complete(ctx context.Context) (bool, error) {
	s := c.s
	var exists bool
	err := s.call(ctx, c.name, "check collection exists", func(ctx context.Context) error {
		r, err := s.collections.CollectionExists(ctx, &pb.CollectionExistsRequest{CollectionName: c.name})
		exists = r.GetResult().GetExists()
		return err
	})
	if err != nil || !exists {
		return false, err
	}
	var info *pb.CollectionInfo
	err = s.call(ctx, c.name, "get collection info", func(ctx context.Context) error {
		r, err := s.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: c.name})
		info = r.GetResult()
		return err
	})
	if err != nil {
		return false, err
	}
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
	if params != nil && params.GetSize() == uint64(c.dim) && params.GetDistance() == pb.Distance_Cosine {
		count, err := c.count(ctx)
		if err != nil {
			return false, err
		}
		if count == uint64(c.n) {
			return true, nil
		}
	}
	return false, s.Delete(ctx, c.name)
}

// count is the exact number of points in the collection (CollectionInfo's
// count is approximate).
func (c *Collection) count(ctx context.Context) (uint64, error) {
	var n uint64
	exact := true
	err := c.s.call(ctx, c.name, "count points", func(ctx context.Context) error {
		r, err := c.s.points.Count(ctx, &pb.CountPoints{CollectionName: c.name, Exact: &exact})
		n = r.GetResult().GetCount()
		return err
	})
	return n, err
}

// create makes the empty collection: one unnamed dense vector per point,
// cosine distance.
func (c *Collection) create(ctx context.Context) error {
	return c.s.call(ctx, c.name, "create collection", func(ctx context.Context) error {
		_, err := c.s.collections.Create(ctx, &pb.CreateCollection{
			CollectionName: c.name,
			VectorsConfig: pb.NewVectorsConfig(&pb.VectorParams{
				Size:     uint64(c.dim),
				Distance: pb.Distance_Cosine,
			}),
		})
		return err
	})
}

// upload upserts all n points in batches, each waited for so that a
// completed Ensure means every point is searchable. Upsert is idempotent, so
// a batch retried after a lost reply does no harm.
func (c *Collection) upload(ctx context.Context, vectors func(lo, hi int) ([]float32, error),
	names func(i int) string, progress func(done, total int)) error {
	s := c.s
	wait := true
	for lo := 0; lo < c.n; lo += s.cfg.BatchSize {
		hi := min(lo+s.cfg.BatchSize, c.n)
		vecs, err := vectors(lo, hi)
		if err != nil {
			return fmt.Errorf("qdrant %s collection %s: vectors %d-%d: %w", s.cfg.Addr(), c.name, lo, hi-1, err)
		}
		if len(vecs) != (hi-lo)*c.dim {
			return fmt.Errorf("qdrant %s collection %s: vectors %d-%d: got %d values, want %d", s.cfg.Addr(), c.name, lo, hi-1, len(vecs), (hi-lo)*c.dim)
		}
		points := make([]*pb.PointStruct, hi-lo)
		for i := range points {
			row := vecs[i*c.dim : (i+1)*c.dim]
			for _, x := range row {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("qdrant %s collection %s: vector %d holds non-finite value %v", s.cfg.Addr(), c.name, lo+i, x)
				}
			}
			p := &pb.PointStruct{Id: pb.NewIDNum(uint64(lo + i)), Vectors: pb.NewVectorsDense(row)}
			if names != nil {
				p.Payload = map[string]*pb.Value{"name": pb.NewValueString(names(lo + i))}
			}
			points[i] = p
		}
		err = s.call(ctx, c.name, fmt.Sprintf("upsert points %d-%d", lo, hi-1), func(ctx context.Context) error {
			_, err := s.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: c.name, Wait: &wait, Points: points})
			return err
		})
		if err != nil {
			return err
		}
		if progress != nil {
			progress(hi, c.n)
		}
	}
	return nil
}

// Name is the collection's name.
func (c *Collection) Name() string { return c.name }

// Dim is the length of every stored vector and of every query.
func (c *Collection) Dim() int { return c.dim }

// Len is the number of stored vectors, as Ensure left them.
func (c *Collection) Len() int { return c.n }

// tiePad is how many hits beyond k Search asks for. Qdrant orders equal
// scores arbitrarily, while vecindex.Index wants smaller ids first; the
// extra hits let Search re-sort a tie that straddles the k-th place. A tie
// wider than tiePad at that place may still order differently from Flat.
const tiePad = 16

// Search returns the k stored vectors most similar to query by cosine,
// best first, equal scores by smaller id: vecindex.Flat's contract. k larger
// than Len returns every vector; k <= 0, a query of the wrong dimension or
// with non-finite values is an error. A zero query scores 0 against every
// vector, as in Flat, and is answered without asking the server.
func (c *Collection) Search(ctx context.Context, query []float32, k int) ([]vecindex.Hit, error) {
	if len(query) != c.dim {
		return nil, fmt.Errorf("qdrant collection %s: query has dimension %d, index has %d", c.name, len(query), c.dim)
	}
	if k <= 0 {
		return nil, fmt.Errorf("qdrant collection %s: k = %d, want k >= 1", c.name, k)
	}
	zero := true
	for _, x := range query {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("qdrant collection %s: query holds non-finite value %v", c.name, x)
		}
		zero = zero && x == 0
	}
	k = min(k, c.n)
	if k == 0 {
		return []vecindex.Hit{}, nil
	}
	if zero {
		hits := make([]vecindex.Hit, k)
		for i := range hits {
			hits[i].ID = int32(i)
		}
		return hits, nil
	}
	s := c.s
	exact := !s.cfg.Approximate
	req := &pb.SearchPoints{
		CollectionName: c.name,
		Vector:         query,
		Limit:          uint64(min(k+tiePad, c.n)),
		WithPayload:    pb.NewWithPayload(false),
		Params:         &pb.SearchParams{Exact: &exact},
	}
	var res []*pb.ScoredPoint
	err := s.call(ctx, c.name, "search", func(ctx context.Context) error {
		r, err := s.points.Search(ctx, req)
		res = r.GetResult()
		return err
	})
	if err != nil {
		return nil, err
	}
	hits := make([]vecindex.Hit, 0, len(res))
	for _, p := range res {
		id, ok := p.GetId().GetPointIdOptions().(*pb.PointId_Num)
		if !ok || id.Num >= uint64(c.n) {
			return nil, fmt.Errorf("qdrant %s collection %s: search returned point id %v outside 0..%d", s.cfg.Addr(), c.name, p.GetId(), c.n-1)
		}
		hits = append(hits, vecindex.Hit{ID: int32(id.Num), Score: p.GetScore()})
	}
	slices.SortFunc(hits, func(a, b vecindex.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))], nil
}
