def throw_away_apple():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab the apple
	find('apple')
	assert('close' to 'apple' )
		else: find('apple')
	grab('apple')
	# 2: open the garbage can
	find('garbagecan')
	assert('close' to 'garbagecan' )
		else: find('garbagecan')
	assert('garbagecan' is 'closed' )
		else: close('garbagecan')
	open('garbagecan')
	# 3: put the apple in the garbage can
	assert('apple' in 'hands' )
		else: find('apple')
		else: grab('apple')
	assert('garbagecan' is 'opened' )
		else: open('garbagecan')
	putin('apple', 'garbagecan')
	# 4: close the garbage can
	assert('apple' in 'garbagecan' )
		else: putin('apple', 'garbagecan')
	close('garbagecan')
	# 5: Done
