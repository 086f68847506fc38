package qdrant

import (
	"context"
	"math"
	"net"
	"slices"
	"sync"
	"testing"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fake is an in-process Qdrant standing in for a server: the Qdrant,
// Collections and Points gRPC methods this package calls, with exact search
// semantics (cosine of vectors normalised on upload, as Qdrant does). It
// records requests and can be told to fail or hang, for contract tests.
type fake struct {
	pb.UnimplementedQdrantServer
	pb.UnimplementedPointsServer

	mu    sync.Mutex
	colls map[string]*fakeColl
	// calls counts requests per method name ("Search", "Upsert", ...).
	calls map[string]int
	// fail holds, per method, the codes the next calls fail with, in order.
	fail map[string][]codes.Code
	// hang makes a method block until its context ends.
	hang map[string]bool
	// creates and upserts record the requests received.
	creates []*pb.CreateCollection
	upserts []*pb.UpsertPoints
	// apiKeys records the api-key metadata of each request.
	apiKeys []string
}

// fakeColls serves the Collections service on the fake's state; it is a
// type of its own because Collections and Points both have Get and Delete.
type fakeColls struct {
	*fake
	pb.UnimplementedCollectionsServer
}

type fakeColl struct {
	dim    int
	dist   pb.Distance
	points map[uint64]fakePoint
}

type fakePoint struct {
	vec     []float32 // unit length or zero
	payload map[string]*pb.Value
}

// startFake serves a fake on a 127.0.0.1 listener and returns it with the
// Config to reach it: small retry waits and timeouts keep tests fast.
func startFake(t *testing.T) (*fake, Config) {
	t.Helper()
	f := &fake{colls: map[string]*fakeColl{}, calls: map[string]int{}, fail: map[string][]codes.Code{}, hang: map[string]bool{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterQdrantServer(srv, f)
	pb.RegisterCollectionsServer(srv, fakeColls{fake: f})
	pb.RegisterPointsServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	port := lis.Addr().(*net.TCPAddr).Port
	return f, Config{Host: "127.0.0.1", Port: port, Timeout: 2e9, Backoff: 1e6, MaxRetries: 3}
}

// enter records a call to method and returns the error it was told to fail
// with, after hanging until ctx ends if so told.
func (f *fake) enter(ctx context.Context, method string) error {
	f.mu.Lock()
	f.calls[method]++
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		f.apiKeys = append(f.apiKeys, md.Get("api-key")...)
	}
	hang := f.hang[method]
	var code codes.Code
	if q := f.fail[method]; len(q) > 0 {
		code, f.fail[method] = q[0], q[1:]
	}
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	if code != codes.OK {
		return status.Errorf(code, "fake: injected %v", code)
	}
	return nil
}

// set changes the fake's failure plan under its lock.
func (f *fake) set(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
}

// points is the number of points in collection name (-1: no collection).
func (f *fake) points(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[name]
	if !ok {
		return -1
	}
	return len(c.points)
}

// requests returns the Create and Upsert requests received so far.
func (f *fake) requests() ([]*pb.CreateCollection, []*pb.UpsertPoints) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.creates), slices.Clone(f.upserts)
}

func (f *fake) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fake) HealthCheck(ctx context.Context, _ *pb.HealthCheckRequest) (*pb.HealthCheckReply, error) {
	if err := f.enter(ctx, "HealthCheck"); err != nil {
		return nil, err
	}
	return &pb.HealthCheckReply{Title: "fake qdrant", Version: "1.17.1"}, nil
}

func (f fakeColls) CollectionExists(ctx context.Context, r *pb.CollectionExistsRequest) (*pb.CollectionExistsResponse, error) {
	if err := f.enter(ctx, "CollectionExists"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.colls[r.CollectionName]
	return &pb.CollectionExistsResponse{Result: &pb.CollectionExists{Exists: ok}}, nil
}

func (f fakeColls) Get(ctx context.Context, r *pb.GetCollectionInfoRequest) (*pb.GetCollectionInfoResponse, error) {
	if err := f.enter(ctx, "Get"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[r.CollectionName]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "collection %s not found", r.CollectionName)
	}
	n := uint64(len(c.points))
	return &pb.GetCollectionInfoResponse{Result: &pb.CollectionInfo{
		Status:      pb.CollectionStatus_Green,
		PointsCount: &n,
		Config: &pb.CollectionConfig{Params: &pb.CollectionParams{
			VectorsConfig: pb.NewVectorsConfig(&pb.VectorParams{Size: uint64(c.dim), Distance: c.dist}),
		}},
	}}, nil
}

func (f fakeColls) Create(ctx context.Context, r *pb.CreateCollection) (*pb.CollectionOperationResponse, error) {
	if err := f.enter(ctx, "Create"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.colls[r.CollectionName]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "collection %s already exists", r.CollectionName)
	}
	p := r.GetVectorsConfig().GetParams()
	if p == nil || p.Size == 0 {
		return nil, status.Error(codes.InvalidArgument, "vectors config missing")
	}
	f.creates = append(f.creates, r)
	f.colls[r.CollectionName] = &fakeColl{dim: int(p.Size), dist: p.Distance, points: map[uint64]fakePoint{}}
	return &pb.CollectionOperationResponse{Result: true}, nil
}

func (f fakeColls) Delete(ctx context.Context, r *pb.DeleteCollection) (*pb.CollectionOperationResponse, error) {
	if err := f.enter(ctx, "Delete"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.colls[r.CollectionName]
	delete(f.colls, r.CollectionName)
	return &pb.CollectionOperationResponse{Result: ok}, nil
}

func (f *fake) Upsert(ctx context.Context, r *pb.UpsertPoints) (*pb.PointsOperationResponse, error) {
	if err := f.enter(ctx, "Upsert"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[r.CollectionName]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "collection %s not found", r.CollectionName)
	}
	for _, p := range r.Points {
		v := p.GetVectors().GetVector().GetDense().GetData()
		if len(v) != c.dim {
			return nil, status.Errorf(codes.InvalidArgument, "vector of %d dims, collection has %d", len(v), c.dim)
		}
		c.points[p.GetId().GetNum()] = fakePoint{vec: unit(v), payload: p.Payload}
	}
	f.upserts = append(f.upserts, r)
	return &pb.PointsOperationResponse{Result: &pb.UpdateResult{Status: pb.UpdateStatus_Completed}}, nil
}

func (f *fake) Count(ctx context.Context, r *pb.CountPoints) (*pb.CountResponse, error) {
	if err := f.enter(ctx, "Count"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[r.CollectionName]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "collection %s not found", r.CollectionName)
	}
	return &pb.CountResponse{Result: &pb.CountResult{Count: uint64(len(c.points))}}, nil
}

// Search scores every point exactly. Equal scores come back in decreasing
// id order, the opposite of vecindex.Flat's, so that tests prove the client
// restores Flat's order rather than relying on the server's.
func (f *fake) Search(ctx context.Context, r *pb.SearchPoints) (*pb.SearchResponse, error) {
	if err := f.enter(ctx, "Search"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[r.CollectionName]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "collection %s not found", r.CollectionName)
	}
	if len(r.Vector) != c.dim {
		return nil, status.Errorf(codes.InvalidArgument, "query of %d dims, collection has %d", len(r.Vector), c.dim)
	}
	q := unit(r.Vector)
	res := make([]*pb.ScoredPoint, 0, len(c.points))
	for id, p := range c.points {
		var s float64
		for i := range q {
			s += float64(q[i]) * float64(p.vec[i])
		}
		res = append(res, &pb.ScoredPoint{Id: pb.NewIDNum(id), Score: float32(s)})
	}
	slices.SortFunc(res, func(a, b *pb.ScoredPoint) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if a.Id.GetNum() > b.Id.GetNum() {
			return -1
		}
		return 1
	})
	if uint64(len(res)) > r.Limit {
		res = res[:r.Limit]
	}
	return &pb.SearchResponse{Result: res}, nil
}

// unit returns v scaled to unit length, zero vectors unchanged.
func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := slices.Clone(v)
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i := range out {
		out[i] = float32(float64(out[i]) * inv)
	}
	return out
}
